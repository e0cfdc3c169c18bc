import { HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostSched, UnprocessableEntityError, ValidationError } from '@postsched/sdk';
import { BASE, wirePost } from '../helpers.js';
import { recordRequests } from './record.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

/** Answers `answer` (a post by default) to every call and records what arrived. */
const record = (answer: () => Response = () => HttpResponse.json(wirePost())) => recordRequests(server, answer);

const client = () => new PostSched({ baseUrl: BASE, auth: 'tok' });
const publish_at = '2030-01-01T09:00:00Z';

/** The ValidationError a call rejects (or throws) with. */
async function refusal(call: () => unknown): Promise<ValidationError> {
  let error: unknown;
  try {
    await call();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ValidationError);
  return error as ValidationError;
}

describe('input objects hold only the fields the SDK knows', () => {
  it.each([
    ['posts.create', { account_ids: ['acc_1'], publish_at, txt: 'hi' }, ['txt'], /is not a field `posts\.create` knows .*\{ extraBody: \{ "txt": … \} \}/],
    ['posts.update', { publishAt: publish_at }, ['publishAt'], /Did you mean `publish_at`\?/],
    ['posts.create', { account_ids: ['acc_1'], publish_at, idempotencyKey: 'k' }, ['idempotencyKey'], /It is a request option: pass it in the options/],
    ['posts.list', { cursor: 'abc' }, ['cursor'], /is not a field `posts\.list` knows .*\{ extraQuery: \{ "cursor": … \} \}/],
    ['accounts.list', { page_size: 10 }, ['page_size'], /Did you mean `pageSize`\?/],
    ['media.upload', { file: new Uint8Array([1]), name: 'a.png' }, ['name'], /is not a field `media\.upload` knows/],
  ])('%s(%o) is refused before anything is sent, naming the field', async (method, params, path, message) => {
    const seen = record();
    const c = client();
    const calls: Record<string, () => unknown> = {
      'posts.create': () => c.posts.create(params as never),
      'posts.update': () => c.posts.update('post_1', params as never),
      'posts.list': () => c.posts.list(params as never),
      'accounts.list': () => c.accounts.list(params as never),
      'media.upload': () => c.media.upload(params as never),
    };
    const error = await refusal(calls[method]!);
    expect(error.path).toEqual(path);
    expect(error.message).toMatch(message);
    expect(seen).toHaveLength(0);
  });

  it.each([
    ['an object', 'posts.create', () => client().posts.create('hello' as never), /`posts\.create` takes an object .*got string/],
    ['text as a string', 'posts.create', () => client().posts.create({ account_ids: ['a'], publish_at, text: 5 as never }), /`text` must be a string, got number/],
    ['text not null', 'posts.update', () => client().posts.update('p', { text: null as never }), /`text` must be a string, got null/],
    ['media_ids as an array', 'posts.update', () => client().posts.update('p', { media_ids: 'media_1' as never }), /`media_ids` must be an array of media ids, got string/],
    ['a known status', 'posts.list', () => client().posts.list({ status: 'schedulled' as never }), /`status` must be one of scheduled, published, failed, deleted, got "schedulled"\. For another value use `\{ extraQuery: \{ status \} \}`/],
  ])('wants %s (%s)', async (_what, _method, call, message) => {
    const seen = record();
    expect((await refusal(call)).message).toMatch(message);
    expect(seen).toHaveLength(0);
  });

  it('sends an update with only the fields given, and leaves undefined ones out', async () => {
    const seen = record();
    await client().posts.update('post_1', { text: 'Hi', media_ids: [] });
    expect(seen[0]!.body).toEqual({ text: 'Hi', media_ids: [] });
  });

  it('leaves a time in the past and a long text to the service, whose 422 names the field', async () => {
    const seen = record(() =>
      HttpResponse.json({ error: { code: 'validation_error', message: 'publish_at: must be in the future.', field: 'publish_at' } }, { status: 422 }),
    );
    const error = await client()
      .posts.create({ account_ids: ['acc_1'], publish_at: '2001-01-01T00:00:00Z', text: 'x'.repeat(100_000) })
      .catch((e: unknown) => e);
    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).message).toContain('publish_at: must be in the future');
    expect((error as UnprocessableEntityError).body).toMatchObject({ error: { field: 'publish_at' } });
  });
});

describe('the escape hatch: extraBody and extraQuery in the request options', () => {
  it('merges extraBody into the JSON body of posts.create and posts.update; a key there wins', async () => {
    const seen = record();
    await client().posts.create({ account_ids: ['acc_1'], publish_at, text: 'Hi' }, { extraBody: { campaign: 'spring', labels: ['a'] } });
    await client().posts.update('post_1', { publish_at }, { extraBody: { publish_at: 'tomorrow 9am', priority: 2 } });
    expect(seen[0]!.body).toEqual({ account_ids: ['acc_1'], publish_at: '2030-01-01T09:00:00.000Z', text: 'Hi', campaign: 'spring', labels: ['a'] });
    expect(seen[1]!.body).toEqual({ publish_at: 'tomorrow 9am', priority: 2 });
  });

  it('adds extraQuery to every page of a list, a status the SDK does not know included', async () => {
    let page = 0;
    const seen = record(() => HttpResponse.json({ data: [wirePost({ id: `post_${++page}` })], next_cursor: page < 2 ? 'c2' : null }));
    const posts = await client().posts.list({ pageSize: 10 }, { extraQuery: { status: 'queued_for_review', include_deleted: true } }).toArray();
    expect(posts.map((p) => p.id)).toEqual(['post_1', 'post_2']);
    expect(seen.map((s) => Object.fromEntries(s.url.searchParams))).toEqual([
      { limit: '10', status: 'queued_for_review', include_deleted: 'true' },
      { cursor: 'c2', limit: '10', status: 'queued_for_review', include_deleted: 'true' },
    ]);
  });

  it('adds extraQuery to a single read', async () => {
    const seen = record();
    await client().posts.get('post_1', { extraQuery: { expand: 'media' } });
    expect(seen[0]!.url.search).toBe('?expand=media');
  });

  it.each([
    ['extraBody on a call without a body', () => client().posts.get('p', { extraBody: { a: 1 } } as never), ['extraBody'], /applies to calls that send a JSON body/],
    ['extraBody that is not an object', () => client().posts.create({ account_ids: ['a'], publish_at }, { extraBody: 'x' as never }), ['extraBody'], /must be an object/],
    ['an extraQuery value that is an object', () => client().posts.get('p', { extraQuery: { a: {} as never } }), ['extraQuery', 'a'], /must be a string, a finite number or a boolean/],
    ['an extraQuery value that is NaN', () => client().posts.get('p', { extraQuery: { a: Number.NaN } }), ['extraQuery', 'a'], /must be a string, a finite number or a boolean/],
  ])('refuses %s before anything is sent', async (_case, call, path, message) => {
    const seen = record();
    const error = await refusal(call);
    expect(error.path).toEqual(path);
    expect(error.message).toMatch(message);
    expect(seen).toHaveLength(0);
  });
});

import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostSched, ResponseValidationError } from '@postsched/sdk';
import { BASE } from '../helpers.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

/** Answers every call with `body` (a 204 without a body when `undefined`). */
function answer(body: unknown, status = 200) {
  server.use(http.all(`${BASE}/*`, () => (body === undefined ? new HttpResponse(null, { status: 204 }) : HttpResponse.json(body, { status }))));
}

const client = () => new PostSched({ baseUrl: BASE, auth: 'tok' });
const publish_at = '2030-01-01T09:00:00Z';

/** What a service that answers exactly what the spec shows would send. */
const SPEC_POST = { id: 'post_1', account_ids: ['acc_1'] };
const SPEC_ACCOUNT = { id: 'acc_1' };

describe('answers holding only the fields the spec gives', () => {
  it.each([
    ['posts.create', SPEC_POST, (c: PostSched) => c.posts.create({ account_ids: ['acc_1'], publish_at })],
    ['posts.get', SPEC_POST, (c: PostSched) => c.posts.get('post_1')],
    ['posts.update', SPEC_POST, (c: PostSched) => c.posts.update('post_1', { text: 'x' })],
    ['posts.delete', SPEC_POST, (c: PostSched) => c.posts.delete('post_1')],
    ['posts.list', { data: [SPEC_POST] }, (c: PostSched) => c.posts.list().toArray()],
    ['accounts.get', SPEC_ACCOUNT, (c: PostSched) => c.accounts.get('acc_1')],
    ['accounts.list', { data: [SPEC_ACCOUNT] }, (c: PostSched) => c.accounts.list().toArray()],
    ['media.upload', {}, (c: PostSched) => c.media.upload({ file: new Uint8Array([1]) })],
    ['analytics.getPost', {}, (c: PostSched) => c.analytics.getPost('post_1')],
  ])('%s succeeds and returns the answer as sent', async (_method, body, call) => {
    answer(body);
    const result = await call(client());
    expect(result).toEqual('data' in body ? body.data : body);
  });

  it('reads every assumed field as undefined', async () => {
    answer(SPEC_POST);
    const post = await client().posts.get('post_1');
    expect([post.status, post.publish_at, post.created_at, post.text, post.media_ids, post.published_at]).toEqual(Array(6).fill(undefined));
    answer({});
    const media = await client().media.upload({ file: new Uint8Array([1]) });
    expect([media.id, media.filename, media.size]).toEqual([undefined, undefined, undefined]);
  });
});

describe('assumed fields that are absent, null or of another type', () => {
  it('keeps each raw value on the object, unknown fields and unknown status values included', async () => {
    const body = {
      id: 'post_1',
      account_ids: ['acc_1', 'acc_2'],
      status: 'queued_for_review',
      publish_at: null,
      created_at: 1767225600,
      media_ids: 'media_1',
      text: { rich: [{ bold: 'hi' }] },
      reach: { estimated: 1200, by_platform: { x: 800 } },
    };
    answer(body);
    const post = await client().posts.get('post_1');
    expect(post).toEqual(body);
    expect(Object.keys(post)).toEqual(Object.keys(body));
  });

  it('keeps an account whose platform and name are missing or not strings', async () => {
    answer({ data: [{ id: 'acc_1', platform: 7 }, { id: 'acc_2', name: null, avatar: { url: 'https://x.test/a.png' } }] });
    expect(await client().accounts.list().toArray()).toEqual([
      { id: 'acc_1', platform: 7 },
      { id: 'acc_2', name: null, avatar: { url: 'https://x.test/a.png' } },
    ]);
  });

  it('returns undefined for a DELETE answered 204 without a body', async () => {
    answer(undefined);
    await expect(client().posts.delete('post_1')).resolves.toBeUndefined();
  });
});

describe('answers the SDK cannot use: ResponseValidationError naming the path, the expected and the received type', () => {
  it.each([
    ['a post without id', 'posts.get', { account_ids: ['acc_1'] }, ['id'], 'expected string, received nothing (the field is missing)'],
    ['a post whose id is a number', 'posts.get', { id: 7, account_ids: [] }, ['id'], 'expected string, received number'],
    ['a post whose id is null', 'posts.get', { id: null, account_ids: [] }, ['id'], 'expected string, received null'],
    ['account_ids as one string', 'posts.get', { id: 'p', account_ids: 'acc_1' }, ['account_ids'], 'expected array of strings, received string'],
    ['account_ids holding a number', 'posts.get', { id: 'p', account_ids: ['acc_1', 2] }, ['account_ids', 1], 'expected string, received number'],
    ['an array instead of a post', 'posts.get', [SPEC_POST], [], 'expected object, received array'],
    ['an empty 204 instead of a post', 'posts.get', undefined, [], 'expected object, received an empty body'],
    ['an account without id', 'accounts.get', { name: 'Main' }, ['id'], 'expected string, received nothing (the field is missing)'],
    ['a page without its items', 'posts.list', { items: [SPEC_POST] }, ['data'], 'expected array, received nothing (the field is missing)'],
    ['a page whose items are an object', 'accounts.list', { data: { id: 'acc_1' } }, ['data'], 'expected array, received object'],
    ['a page item without id', 'accounts.list', { data: [SPEC_ACCOUNT, { name: 'x' }] }, ['data', 1, 'id'], 'expected string, received nothing'],
    ['a page item that is a string', 'posts.list', { data: ['post_1'] }, ['data', 0], 'expected object, received string'],
    ['analytics as a number', 'analytics.getPost', 42, [], 'expected object, received number'],
    ['a media item as null', 'media.upload', null, [], 'expected object, received null'],
  ])('%s', async (_case, method, body, path, words) => {
    answer(body);
    const c = client();
    const calls: Record<string, () => Promise<unknown>> = {
      'posts.get': () => c.posts.get('p'),
      'posts.list': () => c.posts.list().toArray(),
      'accounts.get': () => c.accounts.get('a'),
      'accounts.list': () => c.accounts.list().toArray(),
      'analytics.getPost': () => c.analytics.getPost('p'),
      'media.upload': () => c.media.upload({ file: new Uint8Array([1]) }),
    };
    const error = (await calls[method]!().catch((e: unknown) => e)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.path).toEqual(path);
    expect(error.message).toContain(`at "${path.length === 0 ? '(root)' : path.join('.')}": ${words}`);
    expect(error.body).toEqual(body);
  });
});

describe('the page envelope', () => {
  function pages(bodies: Record<string, unknown>) {
    const cursors: Array<string | null> = [];
    server.use(
      http.get(`${BASE}/posts`, ({ request }) => {
        const cursor = new URL(request.url).searchParams.get('cursor');
        cursors.push(cursor);
        return Response.json(bodies[cursor ?? 'first']);
      }),
    );
    return cursors;
  }

  it('reads a missing or null next_cursor as the last page', async () => {
    const cursors = pages({ first: { data: [SPEC_POST] } });
    const seen = [];
    for await (const page of client().posts.list().pages()) seen.push(page.next_cursor);
    expect(seen).toEqual([null]);
    expect(cursors).toEqual([null]);
  });

  it('follows a numeric next_cursor as its decimal string', async () => {
    const cursors = pages({ first: { data: [SPEC_POST], next_cursor: 20 }, '20': { data: [{ id: 'post_2', account_ids: [] }], next_cursor: null } });
    expect((await client().posts.list().toArray()).map((p) => p.id)).toEqual(['post_1', 'post_2']);
    expect(cursors).toEqual([null, '20']);
  });

  it('ends the list on a next_cursor of another type', async () => {
    const cursors = pages({ first: { data: [SPEC_POST], next_cursor: { after: 'post_1' } } });
    expect(await client().posts.list().toArray()).toEqual([SPEC_POST]);
    expect(cursors).toEqual([null]);
  });

  it('reads a bare JSON array as one last page', async () => {
    const cursors = pages({ first: [SPEC_POST, { id: 'post_2', account_ids: ['acc_2'] }] });
    const seen = [];
    for await (const page of client().posts.list().pages()) seen.push(page);
    expect(seen).toEqual([{ data: [SPEC_POST, { id: 'post_2', account_ids: ['acc_2'] }], next_cursor: null }]);
    expect(cursors).toEqual([null]);
  });
});

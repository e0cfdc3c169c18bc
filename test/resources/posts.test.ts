import { HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostSched, ResponseValidationError, ValidationError, type Post } from '@postsched/sdk';
import { BASE, FakeTokenProvider, JSON_HEADERS, wirePost } from '../helpers.js';
import { recordRequests } from './record.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const record = (answer: () => Response) => recordRequests(server, answer);

const client = () => new PostSched({ baseUrl: BASE, auth: new FakeTokenProvider('tok_live') });

describe('posts', () => {
  it('creates a post with POST /posts, a bearer token, JSON body and publish_at in UTC', async () => {
    const seen = record(() => HttpResponse.json(wirePost(), { status: 201, headers: JSON_HEADERS }));
    const post = await client().posts.create(
      { account_ids: ['acc_1', 'acc_2'], publish_at: '2030-01-01T10:00:00+01:00', text: 'Hello' },
      { idempotencyKey: 'idem_1', extraBody: { campaign: 'spring' } },
    );
    expect(post.id).toBe('post_1');
    expect(seen).toHaveLength(1);
    const [request] = seen;
    expect(request!.method).toBe('POST');
    expect(request!.url.pathname).toBe('/v1/posts');
    expect(request!.headers.get('authorization')).toBe('Bearer tok_live');
    expect(request!.headers.get('content-type')).toBe('application/json');
    expect(request!.headers.get('accept')).toBe('application/json');
    expect(request!.headers.get('idempotency-key')).toBe('idem_1');
    expect(request!.body).toEqual({
      account_ids: ['acc_1', 'acc_2'],
      publish_at: '2030-01-01T09:00:00.000Z',
      text: 'Hello',
      campaign: 'spring',
    });
  });

  it('sends a Date publish_at as ISO 8601 UTC and no Idempotency-Key unless asked', async () => {
    const seen = record(() => HttpResponse.json(wirePost(), { status: 201 }));
    await client().posts.create({ account_ids: ['acc_1'], publish_at: new Date(Date.UTC(2030, 0, 1, 9)) });
    expect((seen[0]!.body as { publish_at: string }).publish_at).toBe('2030-01-01T09:00:00.000Z');
    expect(seen[0]!.headers.has('idempotency-key')).toBe(false);
  });

  it('gets, updates and deletes a post on /posts/{id} with the right methods and bodies', async () => {
    const seen = record(() => HttpResponse.json(wirePost({ status: 'deleted' })));
    const c = client();
    await c.posts.get('post_1');
    await c.posts.update('post_1', { text: 'Changed', publish_at: new Date(Date.UTC(2030, 5, 1)) });
    const deleted = await c.posts.delete('post_1');
    expect(deleted?.status).toBe('deleted');
    expect(seen.map((s) => `${s.method} ${s.url.pathname}`)).toEqual([
      'GET /v1/posts/post_1',
      'PATCH /v1/posts/post_1',
      'DELETE /v1/posts/post_1',
    ]);
    expect(seen[0]!.body).toBeUndefined();
    expect(seen[1]!.body).toEqual({ text: 'Changed', publish_at: '2030-06-01T00:00:00.000Z' });
    expect(seen[1]!.headers.get('content-type')).toBe('application/json');
    expect(seen[2]!.body).toBeUndefined();
    for (const s of seen) expect(s.headers.get('authorization')).toBe('Bearer tok_live');
  });

  // The spec does not show what a DELETE answers: a 2xx is a cancelled post, whatever its body.
  it.each([[{}], [{ deleted: true }], [{ id: 'post_1' }], [[]], [null]])('resolves a DELETE answered 200 with %j (not a post) to undefined, not an error', async (body) => {
    record(() => HttpResponse.json(body));
    await expect(client().posts.delete('post_1')).resolves.toBeUndefined();
  });

  it('lists posts with GET /posts?status=&limit= and follows the cursor', async () => {
    const seen = record(() => HttpResponse.json({ data: [wirePost()], next_cursor: null }));
    const posts: Post[] = [];
    for await (const post of client().posts.list({ status: 'scheduled', pageSize: 50 })) posts.push(post);
    expect(posts).toHaveLength(1);
    expect(seen[0]!.method).toBe('GET');
    expect(seen[0]!.url.pathname).toBe('/v1/posts');
    expect(Object.fromEntries(seen[0]!.url.searchParams)).toEqual({ status: 'scheduled', limit: '50' });
  });

  it('keeps fields and status values the SDK does not know', async () => {
    record(() => HttpResponse.json(wirePost({ status: 'queued_for_review', reach: { estimated: 1200 }, labels: ['x'] })));
    const post = await client().posts.get('post_1');
    expect(post.status).toBe('queued_for_review');
    expect(post['reach']).toEqual({ estimated: 1200 });
    expect(post['labels']).toEqual(['x']);
  });

  it('encodes ids into one path segment, so "a/b?x=1#y" cannot change the route', async () => {
    const seen = record(() => HttpResponse.json(wirePost()));
    await client().posts.get('a/b?x=1#y');
    expect(seen[0]!.url.pathname).toBe('/v1/posts/a%2Fb%3Fx%3D1%23y');
    expect(seen[0]!.url.search).toBe('');
  });

  // "a/../b" was sent as a%2F..%2Fb: a server that decodes %2F before resolving dot segments reads it as "b".
  it.each(['', '.', '..', 'a/../b'])('refuses the id %j before sending anything', async (id) => {
    const seen = record(() => HttpResponse.json(wirePost()));
    await expect(client().posts.get(id)).rejects.toBeInstanceOf(ValidationError);
    await expect(client().posts.delete(id)).rejects.toMatchObject({ path: ['id'] });
    expect(seen).toHaveLength(0);
  });

  it.each([
    [{ publish_at: '2030-01-01T09:00:00Z' }, ['account_ids']],
    [{ account_ids: [], publish_at: '2030-01-01T09:00:00Z' }, ['account_ids']],
    [{ account_ids: ['acc_1', ''], publish_at: '2030-01-01T09:00:00Z' }, ['account_ids', 1]],
    [{ account_ids: 'acc_1', publish_at: '2030-01-01T09:00:00Z' }, ['account_ids']],
    [{ account_ids: ['acc_1'] }, ['publish_at']],
    [{ account_ids: ['acc_1'], publish_at: 'next tuesday' }, ['publish_at']],
    [{ account_ids: ['acc_1'], publish_at: '2030-02-30T09:00:00Z' }, ['publish_at']],
    [{ account_ids: ['acc_1'], publish_at: '2030-01-01T09:00:00' }, ['publish_at']],
    [{ account_ids: ['acc_1'], publish_at: new Date('nope') }, ['publish_at']],
  ])('rejects create(%j) with a ValidationError at %j before any request', async (params, path) => {
    const seen = record(() => HttpResponse.json(wirePost()));
    const error = await client().posts.create(params as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(path);
    expect((error as ValidationError).message).toContain(path.join('.'));
    expect(seen).toHaveLength(0);
  });

  it.each(['2028-02-29T09:00:00Z', '2030-06-01T09:30:00.123+02:00', '2030-12-31T23:59:59-05:30'])(
    'accepts publish_at %s (leap day, offset, fractional seconds) and sends it as UTC',
    async (publishAt) => {
      const seen = record(() => HttpResponse.json(wirePost()));
      await client().posts.create({ account_ids: ['acc_1'], publish_at: publishAt });
      expect((seen[0]!.body as { publish_at: string }).publish_at).toBe(new Date(publishAt).toISOString());
    },
  );

  it.each(['2029-02-29T09:00:00Z', '2030-04-31T09:00:00Z', '2030-01-01T24:00:00Z', '2030-01-01T09:00Z', '2030-01-01T09:00:00+25:00'])(
    'rejects publish_at %s (no such day or time, no seconds, bad offset)',
    async (publishAt) => {
      await expect(client().posts.create({ account_ids: ['acc_1'], publish_at: publishAt })).rejects.toMatchObject({
        path: ['publish_at'],
      });
    },
  );

  it('rejects an invalid publish_at in update too', async () => {
    await expect(client().posts.update('post_1', { publish_at: 'soon' })).rejects.toMatchObject({ path: ['publish_at'] });
  });

  it('raises ResponseValidationError naming the field, with the raw body, when the answer breaks the schema', async () => {
    const broken = wirePost({ account_ids: 'acc_1' });
    record(() => HttpResponse.json(broken));
    const error = await client().posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).path).toEqual(['account_ids']);
    expect((error as ResponseValidationError).message).toContain('account_ids');
    expect((error as ResponseValidationError).body).toEqual(broken);
  });

  it('gives the raw Response and the request id with .withResponse()', async () => {
    record(() => HttpResponse.json(wirePost(), { status: 201, headers: { 'x-request-id': 'req_abc' } }));
    const { data, response, requestId } = await client()
      .posts.create({ account_ids: ['acc_1'], publish_at: '2030-01-01T09:00:00Z' })
      .withResponse();
    expect(data.id).toBe('post_1');
    expect(response.status).toBe(201);
    expect(requestId).toBe('req_abc');
    expect(await response.json()).toEqual(wirePost());
  });
});

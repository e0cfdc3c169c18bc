import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, type Harness, inFuture, jsonBody, MODES, start } from './helpers.js';

describe.each(MODES)('resources over %s', (mode) => {
  let h: Harness;
  let token: string;
  beforeEach(async () => {
    h = await start(mode);
    token = h.fake.issueTokens().access_token;
  });
  afterEach(() => h.close());

  const createPost = (body: Record<string, unknown>, extra: Record<string, string> = {}) =>
    h.call('/posts', jsonBody('POST', body, token, extra));

  it.each([
    ['GET', '/accounts', 'accounts:read'],
    ['GET', '/accounts/acc_demo_x', 'accounts:read'],
    ['GET', '/posts', 'posts:read'],
    ['POST', '/posts', 'posts:write'],
    ['GET', '/posts/post_x', 'posts:read'],
    ['PATCH', '/posts/post_x', 'posts:write'],
    ['DELETE', '/posts/post_x', 'posts:write'],
    ['GET', '/posts/post_x/analytics', 'analytics:read'],
    ['POST', '/media', 'media:write'],
  ])('%s %s needs %s: 403 insufficient_scope naming it', async (method, path, scope) => {
    const others = ['accounts:read', 'posts:read', 'posts:write', 'media:write', 'analytics:read'].filter((s) => s !== scope);
    const limited = h.fake.issueTokens({ scopes: others }).access_token;
    const res = await h.call(path, bearer(limited, { method }));
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
    expect(res.headers.get('x-request-id')).toMatch(/^req_[\w-]+$/);
    expect(await res.json()).toMatchObject({ error: { code: 'insufficient_scope' } });
  });

  it('answers 401 with a bare Bearer challenge without a token, and invalid_token for an unknown one', async () => {
    const none = await h.call('/accounts');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const unknown = await h.call('/accounts', bearer('at_unknown'));
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    const body = await unknown.json();
    expect(body).toEqual({ error: { code: 'invalid_token', message: expect.any(String) } });
    expect(JSON.stringify(body)).not.toContain('at_unknown');
  });

  it('lists and gets accounts; an unknown id is 404 not_found', async () => {
    const list = await h.call('/accounts', bearer(token));
    expect(await list.json()).toEqual({
      data: [
        { id: 'acc_demo_x', platform: 'x', name: 'Demo on X' },
        { id: 'acc_demo_linkedin', platform: 'linkedin', name: 'Demo on LinkedIn' },
      ],
      next_cursor: null,
    });
    expect(await (await h.call('/accounts/acc_demo_x', bearer(token))).json()).toMatchObject({ id: 'acc_demo_x' });
    const missing = await h.call('/accounts/acc_nope', bearer(token));
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/json');
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('creates a scheduled post, keeps unknown fields, and gets it back', async () => {
    const publishAt = inFuture(h.fake);
    const res = await createPost({ account_ids: ['acc_demo_x'], publish_at: publishAt, text: 'hi', campaign: 'spring' });
    expect(res.status).toBe(201);
    const post = await res.json();
    expect(post).toMatchObject({ account_ids: ['acc_demo_x'], publish_at: publishAt, status: 'scheduled', text: 'hi', campaign: 'spring' });
    expect(post.id).toMatch(/^post_/);
    expect(post.created_at).toBe(new Date(h.fake.clock.now()).toISOString());
    expect(await (await h.call(`/posts/${post.id}`, bearer(token))).json()).toEqual(post);
    expect(h.fake.stats.postsCreated).toBe(1);
  });

  it.each([
    [{ publish_at: 'soon' }, 'account_ids'],
    [{ account_ids: [], publish_at: 'x' }, 'account_ids'],
    [{ account_ids: ['acc_demo_x', 'acc_nope'] }, 'account_ids.1'],
    [{ account_ids: ['acc_demo_x', 'acc_demo_x'] }, 'account_ids.1'],
    [{ account_ids: ['acc_demo_x'] }, 'publish_at'],
    [{ account_ids: ['acc_demo_x'], publish_at: '2030-01-01 10:00' }, 'publish_at'],
    [{ account_ids: ['acc_demo_x'], publish_at: '2000-01-01T00:00:00Z' }, 'publish_at'],
    [{ account_ids: ['acc_demo_x'], publish_at: 'FUTURE', text: 42 }, 'text'],
    [{ account_ids: ['acc_demo_x'], publish_at: 'FUTURE', media_ids: ['media_nope'] }, 'media_ids.0'],
    [{ account_ids: ['acc_demo_x'], publish_at: 'FUTURE', status: 'published' }, 'status'],
  ])('rejects %j with 422 validation_error naming %s', async (input, field) => {
    const body = { ...input } as Record<string, unknown>;
    if (body.publish_at === 'FUTURE') body.publish_at = inFuture(h.fake);
    const res = await createPost(body);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ error: { code: 'validation_error', message: expect.any(String), field } });
    expect(h.fake.stats.postsCreated).toBe(0);
  });

  it('answers 415 for a body that is not JSON and 400 for broken JSON', async () => {
    const text = await h.call('/posts', bearer(token, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }));
    expect(text.status).toBe(415);
    const broken = await h.call('/posts', bearer(token, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }));
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ error: { code: 'invalid_json' } });
  });

  it('pages posts with limit and an opaque cursor, and filters by status', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await (await createPost({ account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake, 60_000 * (i + 1)) })).json()).id);
    }
    await h.call(`/posts/${ids[1]}`, bearer(token, { method: 'DELETE' }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `/posts?limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = await (await h.call(q, bearer(token))).json();
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((p: { id: string }) => p.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
    const scheduled = await (await h.call('/posts?status=scheduled&limit=100', bearer(token))).json();
    expect(scheduled.data.map((p: { id: string }) => p.id)).toEqual(ids.filter((_, i) => i !== 1));
    const deleted = await (await h.call('/posts?status=deleted', bearer(token))).json();
    expect(deleted).toEqual({ data: [expect.objectContaining({ id: ids[1], status: 'deleted' })], next_cursor: null });
  });

  it.each([
    ['/posts?limit=0', 'limit'],
    ['/posts?limit=101', 'limit'],
    ['/posts?limit=abc', 'limit'],
    ['/posts?cursor=garbage', 'cursor'],
    ['/posts?status=archived', 'status'],
  ])('rejects %s with 422 naming %s', async (path, field) => {
    const res = await h.call(path, bearer(token));
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: { code: 'validation_error', field } });
  });

  it('replays the stored answer for a repeated Idempotency-Key without creating twice', async () => {
    const body = { account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake) };
    const first = await createPost(body, { 'idempotency-key': 'key-1' });
    const again = await createPost(body, { 'idempotency-key': 'key-1' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
    expect(h.fake.stats.postsCreated).toBe(1);
    const reused = await createPost({ ...body, text: 'other' }, { 'idempotency-key': 'key-1' });
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ error: { code: 'idempotency_key_reused' } });
    expect((await createPost(body, { 'idempotency-key': 'key-2' })).status).toBe(201);
    expect(h.fake.stats.postsCreated).toBe(2);
  });

  it('updates only a scheduled post, and refuses changing or deleting a published one with 409', async () => {
    const post = await (await createPost({ account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake, 10_000), text: 'a' })).json();
    const patched = await h.call(`/posts/${post.id}`, jsonBody('PATCH', { text: 'b', media_ids: null }, token));
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ id: post.id, text: 'b', status: 'scheduled' });
    const bad = await h.call(`/posts/${post.id}`, jsonBody('PATCH', { publish_at: 'tomorrow' }, token));
    expect(await bad.json()).toMatchObject({ error: { field: 'publish_at' } });
    await h.fake.clock.advance(10_000);
    expect(h.fake.getPost(post.id)?.status).toBe('published');
    const change = await h.call(`/posts/${post.id}`, jsonBody('PATCH', { text: 'c' }, token));
    expect(change.status).toBe(409);
    expect(await change.json()).toMatchObject({ error: { code: 'post_not_scheduled' } });
    const del = await h.call(`/posts/${post.id}`, bearer(token, { method: 'DELETE' }));
    expect(del.status).toBe(409);
  });

  it('publishes at the new time after publish_at is moved', async () => {
    const post = await (await createPost({ account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake, 10_000) })).json();
    await h.call(`/posts/${post.id}`, jsonBody('PATCH', { publish_at: inFuture(h.fake, 60_000) }, token));
    await h.fake.clock.advance(30_000);
    expect(h.fake.getPost(post.id)?.status).toBe('scheduled');
    await h.fake.clock.advance(30_000);
    expect(h.fake.getPost(post.id)).toMatchObject({ status: 'published', published_at: new Date(h.fake.clock.now()).toISOString() });
  });

  it('deletes a scheduled post (still readable, status deleted), and a repeated DELETE answers the same', async () => {
    const post = await (await createPost({ account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake) })).json();
    const del = await h.call(`/posts/${post.id}`, bearer(token, { method: 'DELETE' }));
    expect(del.status).toBe(200);
    expect(await del.json()).toMatchObject({ id: post.id, status: 'deleted' });
    expect(await (await h.call(`/posts/${post.id}`, bearer(token))).json()).toMatchObject({ status: 'deleted' });
    expect((await h.call(`/posts/${post.id}`, bearer(token, { method: 'DELETE' }))).status).toBe(200);
    await h.fake.clock.advance(120_000);
    expect(h.fake.getPost(post.id)?.status).toBe('deleted');
    expect((await h.call('/posts/post_nope', bearer(token, { method: 'DELETE' }))).status).toBe(404);
  });

  it('gives deterministic analytics for a published post and zeros before', async () => {
    const post = await (await createPost({ account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake, 1_000) })).json();
    expect(await (await h.call(`/posts/${post.id}/analytics`, bearer(token))).json()).toEqual({
      post_id: post.id, impressions: 0, likes: 0, shares: 0, comments: 0, clicks: 0,
    });
    await h.fake.clock.advance(1_000);
    const a = await (await h.call(`/posts/${post.id}/analytics`, bearer(token))).json();
    const b = await (await h.call(`/posts/${post.id}/analytics`, bearer(token))).json();
    expect(a).toEqual(b);
    expect(a.impressions).toBeGreaterThan(0);
    expect(a.likes).toBeLessThanOrEqual(a.impressions);
    expect((await h.call('/posts/post_nope/analytics', bearer(token))).status).toBe(404);
  });

  it('answers 405 with Allow for a wrong method and 404 for an unknown route, always with x-request-id', async () => {
    const wrong = await h.call('/accounts', bearer(token, { method: 'DELETE' }));
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    const unknown = await h.call('/nothing', bearer(token));
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-request-id')).toMatch(/^req_/);
    expect(h.fake.stats.requests['DELETE /accounts']).toBe(1);
  });
});

describe('request bodies', () => {
  it('answers 400 invalid_body for a JSON body that is not an object', async () => {
    const h = await start('handler');
    const token = h.fake.issueTokens().access_token;
    const res = await h.call('/posts', jsonBody('POST', [1, 2], token));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_body' } });
    const proto = await h.call('/posts', bearer(token, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"__proto__":{"x":1}}' }));
    expect(await proto.json()).toMatchObject({ error: { field: '__proto__' } });
    await h.close();
  });
});

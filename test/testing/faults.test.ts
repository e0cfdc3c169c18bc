import { afterEach, describe, expect, it, vi } from 'vitest';
import { bearer, type Harness, inFuture, jsonBody, MODES, start } from './helpers.js';

describe.each(MODES)('fault injection over %s', (mode) => {
  let h: Harness;
  let token: string;
  const setup = async () => {
    h = await start(mode);
    token = h.fake.issueTokens().access_token;
  };
  afterEach(() => h.close());
  const create = () => h.call('/posts', jsonBody('POST', { account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake) }, token));

  it('answers the next N matching requests 429 with Retry-After, then normally', async () => {
    await setup();
    h.fake.faults.rateLimit({ method: 'post', path: '/posts', times: 2, retryAfter: 3 });
    expect((await h.call('/posts', bearer(token))).status).toBe(200); // GET does not match
    for (let i = 0; i < 2; i++) {
      const res = await create();
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('3');
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      expect(await res.json()).toMatchObject({ error: { code: 'rate_limited' } });
    }
    expect((await create()).status).toBe(201);
    expect(h.fake.stats.postsCreated).toBe(1);
    expect(h.fake.stats.requests['POST /posts']).toBe(3);
  });

  it('answers an injected 5xx on a route template, without acting', async () => {
    await setup();
    const post = await (await create()).json();
    h.fake.faults.error({ method: 'DELETE', path: '/posts/{id}', status: 503, retryAfter: 1 });
    const res = await h.call(`/posts/${post.id}`, bearer(token, { method: 'DELETE' }));
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(h.fake.getPost(post.id)?.status).toBe('scheduled');
    h.fake.faults.error({ path: `/posts/${post.id}`, status: 500 });
    expect((await h.call(`/posts/${post.id}`, bearer(token))).status).toBe(500);
    expect((await h.call(`/posts/${post.id}`, bearer(token))).status).toBe(200);
  });

  it('drops the connection for a reset fault: the call rejects like fetch on a network error', async () => {
    await setup();
    h.fake.faults.reset({ path: '/accounts' });
    await expect(h.call('/accounts', bearer(token))).rejects.toThrow(TypeError);
    expect((await h.call('/accounts', bearer(token))).status).toBe(200);
  });

  it('hangs until the client aborts', async () => {
    await setup();
    h.fake.faults.hang({ path: '/accounts' });
    const abort = new AbortController();
    const pending = h.call('/accounts', bearer(token, { signal: abort.signal }));
    let settled = false;
    pending.then(() => (settled = true), () => (settled = true));
    await h.call('/posts', bearer(token)); // another request goes through meanwhile
    expect(settled).toBe(false);
    abort.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect((await h.call('/accounts', bearer(token))).status).toBe(200);
  });

  it('releases hanging requests when the fake closes', async () => {
    await setup();
    h.fake.faults.hang({ times: Infinity });
    const pending = h.call('/accounts', bearer(token));
    const outcome = pending.then(() => 'answered', () => 'rejected');
    await h.fake.flushWebhooks();
    await h.close();
    expect(await outcome).toBe('rejected');
  });
});

describe('latency fault', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('delays matching requests by the given milliseconds, then answers', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const h = await start('handler');
    const token = h.fake.issueTokens().access_token;
    h.fake.faults.latency({ ms: 200, path: '/accounts' });
    let status = 0;
    const pending = h.call('/accounts', bearer(token)).then((r) => (status = r.status));
    await vi.advanceTimersByTimeAsync(199);
    expect(status).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    await pending;
    expect(status).toBe(200);
    // Unmatched routes are not delayed.
    expect((await h.call('/posts', bearer(token))).status).toBe(200);
    await h.close();
  });
});

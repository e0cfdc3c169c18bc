import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ConnectionError,
  InternalServerError,
  PostSched,
  RateLimitError,
  UnprocessableEntityError,
} from '@postsched/sdk';
import { retryAfterMs } from '../../src/http/retry.js';
import { BASE, FakeTokenProvider, flushIO, settle, wirePost } from '../helpers.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  vi.useRealTimers();
});
afterAll(() => server.close());
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(new Date('2030-01-01T00:00:00.000Z'));
});

const client = () => new PostSched({ baseUrl: BASE, auth: new FakeTokenProvider() });
const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);
const newPost = { account_ids: ['acc_1'], publish_at: '2030-02-01T09:00:00Z' };

/** Answers with the given responses in turn (the last one repeats); records each request. */
function answer(method: 'get' | 'post' | 'patch' | 'delete', path: string, ...responses: Array<() => Response>) {
  const requests: Array<{ at: number; headers: Headers; body: string }> = [];
  server.use(
    http[method](`${BASE}${path}`, async ({ request }) => {
      requests.push({ at: Date.now(), headers: request.headers, body: await request.text() });
      return responses[Math.min(requests.length, responses.length) - 1]!();
    }),
  );
  return requests;
}

const status = (code: number, headers: Record<string, string> = {}) => () =>
  HttpResponse.json({ error: { code: 'x', message: `status ${code}` } }, { status: code, headers });
const ok = (code = 200) => () => HttpResponse.json(wirePost(), { status: code });

describe('retries', () => {
  it('sends a POST that gets a 503 exactly once', async () => {
    const requests = answer('post', '/posts', status(503));
    const { error } = await settle(client().posts.create(newPost), advance);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(requests).toHaveLength(1);
  });

  it('sends the same POST with an idempotency key up to three times, with the same key', async () => {
    const requests = answer('post', '/posts', status(503));
    const { error } = await settle(client().posts.create(newPost, { idempotencyKey: 'idem_42' }), advance);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(requests).toHaveLength(3);
    expect(requests.map((r) => r.headers.get('idempotency-key'))).toEqual(['idem_42', 'idem_42', 'idem_42']);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
  });

  it('succeeds when a keyed POST recovers on the second attempt', async () => {
    const requests = answer('post', '/posts', status(502), ok(201));
    const { value } = await settle(client().posts.create(newPost, { idempotencyKey: 'idem_1' }), advance);
    expect(value?.id).toBe('post_1');
    expect(requests).toHaveLength(2);
  });

  it('never re-sends a PATCH without a key, and retries it with one', async () => {
    const without = answer('patch', '/posts/post_1', status(500));
    expect((await settle(client().posts.update('post_1', { text: 'x' }), advance)).error).toBeInstanceOf(InternalServerError);
    expect(without).toHaveLength(1);
    const withKey = answer('patch', '/posts/post_2', status(500));
    await settle(client().posts.update('post_2', { text: 'x' }, { idempotencyKey: 'k' }), advance);
    expect(withKey).toHaveLength(3);
  });

  it.each([408, 429, 500, 502, 503, 504])('retries a GET answered %i, then succeeds', async (code) => {
    const requests = answer('get', '/posts/post_1', status(code), ok());
    const { value } = await settle(client().posts.get('post_1'), advance);
    expect(value?.id).toBe('post_1');
    expect(requests).toHaveLength(2);
  });

  it('retries a DELETE (idempotent) answered 503', async () => {
    const requests = answer('delete', '/posts/post_1', status(503), status(503), ok());
    expect((await settle(client().posts.delete('post_1'), advance)).value?.id).toBe('post_1');
    expect(requests).toHaveLength(3);
  });

  it.each([400, 401, 403, 404, 409, 422])('does not retry a GET answered %i', async (code) => {
    const requests = answer('get', '/posts/post_1', status(code));
    await settle(client().posts.get('post_1'), advance);
    // A 401 gets exactly one re-send after a token refresh (see auth tests); nothing else is re-sent.
    expect(requests).toHaveLength(code === 401 ? 2 : 1);
  });

  it('gives up after maxRetries and throws the last error', async () => {
    const requests = answer('get', '/posts/post_1', status(503));
    const c = new PostSched({ baseUrl: BASE, auth: 'tok', maxRetries: 4 });
    expect((await settle(c.posts.get('post_1'), advance)).error).toBeInstanceOf(InternalServerError);
    expect(requests).toHaveLength(5);
  });

  it('backs off exponentially between attempts (0.5 s, then 1 s, at most 25 % less with jitter)', async () => {
    const requests = answer('get', '/posts/post_1', status(503));
    await settle(client().posts.get('post_1'), advance, 50);
    const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(375);
    expect(gaps[0]).toBeLessThanOrEqual(550);
    expect(gaps[1]).toBeGreaterThanOrEqual(750);
    expect(gaps[1]).toBeLessThanOrEqual(1050);
  });

  it('waits exactly the 2 s of `Retry-After: 2` before re-sending a POST answered 429', async () => {
    const requests = answer('post', '/posts', status(429, { 'retry-after': '2' }), ok(201));
    const call = client().posts.create(newPost);
    void call.catch(() => undefined);
    await flushIO();
    expect(requests).toHaveLength(1);
    await advance(1999);
    await flushIO();
    expect(requests).toHaveLength(1);
    await advance(1);
    await flushIO();
    expect(requests).toHaveLength(2);
    expect((await call).id).toBe('post_1');
  });

  it('honours Retry-After given as an HTTP date', async () => {
    const at = new Date(Date.now() + 7_000).toUTCString();
    const requests = answer('get', '/posts/post_1', status(429, { 'retry-after': at }), ok());
    await settle(client().posts.get('post_1'), advance, 100);
    expect(requests[1]!.at - requests[0]!.at).toBe(7_000);
  });

  it('honours RateLimit-Reset (delay-seconds) when there is no Retry-After', async () => {
    const requests = answer('get', '/posts/post_1', status(429, { 'ratelimit-reset': '5' }), ok());
    await settle(client().posts.get('post_1'), advance, 100);
    expect(requests[1]!.at - requests[0]!.at).toBe(5_000);
  });

  it('throws RateLimitError carrying the wait at once when the wait is beyond the cap', async () => {
    const requests = answer('get', '/posts/post_1', status(429, { 'retry-after': '120' }));
    const call = client().posts.get('post_1');
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(120_000);
    expect((error as RateLimitError).message).toContain('120 s');
    expect(requests).toHaveLength(1);
  });

  it('lets the cap be changed with maxRetryAfterMs', async () => {
    const requests = answer('get', '/posts/post_1', status(429, { 'retry-after': '3' }), ok());
    const c = new PostSched({ baseUrl: BASE, auth: 'tok', maxRetryAfterMs: 2_000 });
    const error = await c.posts.get('post_1').catch((e: unknown) => e);
    expect((error as RateLimitError).retryAfterMs).toBe(3_000);
    expect(requests).toHaveLength(1);
  });

  it('throws RateLimitError with the last wait when 429 outlasts the retries', async () => {
    const requests = answer('post', '/posts', status(429, { 'retry-after': '1' }));
    const { error } = await settle(client().posts.create(newPost), advance);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(1_000);
    expect(requests).toHaveLength(3);
  });

  it('retries a GET after a network error, but never a POST whose request may have left', async () => {
    const gets = answer('get', '/posts/post_1', () => HttpResponse.error(), ok());
    expect((await settle(client().posts.get('post_1'), advance)).value?.id).toBe('post_1');
    expect(gets).toHaveLength(2);
    const posts = answer('post', '/posts', () => HttpResponse.error());
    expect((await settle(client().posts.create(newPost), advance)).error).toBeInstanceOf(ConnectionError);
    expect(posts).toHaveLength(1);
  });

  it('does not retry a 422 even with an idempotency key', async () => {
    const requests = answer('post', '/posts', status(422));
    expect((await settle(client().posts.create(newPost, { idempotencyKey: 'k' }), advance)).error).toBeInstanceOf(UnprocessableEntityError);
    expect(requests).toHaveLength(1);
  });
});

describe('retryAfterMs', () => {
  it('reads seconds, HTTP dates and RateLimit-Reset, and ignores garbage', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:10 GMT' }), now)).toBe(10_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Mon, 31 Dec 2029 00:00:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(new Headers({ 'ratelimit-reset': '30' }), now)).toBe(30_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(new Headers(), now)).toBeUndefined();
  });

  it('reads a number of seconds as a delay up to 2024-01-01 in epoch seconds, and as a timestamp from there, in Retry-After and in every reset header alike', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    const epoch = 1_704_067_200; // 2024-01-01T00:00:00Z
    const delayMs = (epoch - 1) * 1000; // the largest delay-seconds: 54 years, no timestamp
    for (const name of ['retry-after', 'ratelimit-reset', 'x-ratelimit-reset']) {
      // A reset is believed only up to a year: 54 years is left out (the normal backoff applies); Retry-After fails the call.
      expect(retryAfterMs(new Headers({ [name]: String(epoch - 1) }), now)).toBe(name === 'retry-after' ? delayMs : undefined);
      expect(retryAfterMs(new Headers({ [name]: String(epoch) }), now)).toBe(0); // 2024: past
      expect(retryAfterMs(new Headers({ [name]: String(now / 1000 + 30) }), now)).toBe(30_000);
    }
    expect(retryAfterMs(new Headers({ ratelimit: 'limit=100, remaining=0, reset=12' }), now)).toBe(12_000);
    expect(retryAfterMs(new Headers({ ratelimit: '"default";r=0;t=7' }), now)).toBe(7_000);
  });

  it('falls back to RateLimit-Reset when Retry-After is present but empty', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': '', 'ratelimit-reset': '30' }), now)).toBe(30_000);
    expect(retryAfterMs(new Headers({ 'retry-after': '  ', 'ratelimit-reset': '30' }), now)).toBe(30_000);
  });
});

import { getEventListeners } from 'node:events';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { PostSched, TimeoutError } from '@postsched/sdk';
import { BASE, flushIO, wirePost } from '../helpers.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  vi.useRealTimers();
});
afterAll(() => server.close());
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});

const client = (options: { timeoutMs?: number; maxRetries?: number } = {}) => new PostSched({ baseUrl: BASE, auth: 'tok', ...options });

function count(method: 'get' | 'post', path: string, respond: () => Response | Promise<Response>) {
  const requests = { n: 0 };
  server.use(
    http[method](`${BASE}${path}`, async () => {
      requests.n++;
      return respond();
    }),
  );
  return requests;
}

/** A handler that never answers (until the request is aborted). */
const hang = () => new Promise<Response>(() => {});

describe('abort and time-out', () => {
  it('rejects at once when the caller aborts during the wait between retries, leaving no timer or listener', async () => {
    const requests = count('get', '/posts/post_1', () => HttpResponse.json({}, { status: 503 }));
    const controller = new AbortController();
    const call = client().posts.get('post_1', { signal: controller.signal });
    const outcome = call.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await flushIO();
    expect(requests.n).toBe(1);
    expect(vi.getTimerCount()).toBe(1); // the backoff
    controller.abort();
    await flushIO();
    const error = await outcome;
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(requests.n).toBe(1);
  });

  it("rejects with the caller's own abort reason", async () => {
    count('get', '/posts/post_1', () => HttpResponse.json({}, { status: 503 }));
    const controller = new AbortController();
    const call = client().posts.get('post_1', { signal: controller.signal });
    await flushIO();
    const reason = new Error('user left the page');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const requests = count('get', '/posts/post_1', () => HttpResponse.json(wirePost()));
    await expect(client().posts.get('post_1', { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(requests.n).toBe(0);
  });

  it('aborts a request in flight and leaves no timer or listener behind', async () => {
    count('get', '/posts/post_1', hang);
    const controller = new AbortController();
    const call = client().posts.get('post_1', { signal: controller.signal });
    const outcome = call.catch((error: unknown) => error);
    await flushIO();
    expect(vi.getTimerCount()).toBe(1); // the per-attempt time-out
    controller.abort();
    expect(await outcome).toMatchObject({ name: 'AbortError' });
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('leaves no listener on a signal shared by many successful calls', async () => {
    count('get', '/posts/post_1', () => HttpResponse.json(wirePost()));
    const controller = new AbortController();
    const c = client();
    for (let i = 0; i < 20; i++) await c.posts.get('post_1', { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('times out an attempt after timeoutMs and throws TimeoutError', async () => {
    const requests = count('post', '/posts', hang);
    const call = client({ timeoutMs: 1_000 }).posts.create({ account_ids: ['a'], publish_at: '2030-01-01T00:00:00Z' });
    const outcome = call.catch((error: unknown) => error);
    await flushIO();
    await vi.advanceTimersByTimeAsync(999);
    await flushIO();
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(1_000);
    // A POST that timed out may have been acted on: it is not sent again.
    expect(requests.n).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('retries a GET that timed out, with a fresh time-out per attempt', async () => {
    let n = 0;
    count('get', '/posts/post_1', () => (++n === 1 ? hang() : HttpResponse.json(wirePost())));
    const call = client({ timeoutMs: 1_000 }).posts.get('post_1');
    await flushIO();
    await vi.advanceTimersByTimeAsync(1_000); // first attempt times out
    await vi.advanceTimersByTimeAsync(600); // backoff
    expect((await call).id).toBe('post_1');
    expect(n).toBe(2);
  });

  it("waits for a token before the attempt's time-out starts: a slow token request does not shorten it", async () => {
    const later = <T>(ms: number, value: () => T) => new Promise<T>((resolve) => setTimeout(() => resolve(value()), ms));
    const sdk = new PostSched({
      baseUrl: BASE,
      timeoutMs: 1_000,
      maxRetries: 0,
      auth: () => later(800, () => 'tok_slow'),
      fetch: () => later(800, () => Response.json(wirePost())),
    });
    const call = sdk.posts.get('post_1');
    await vi.advanceTimersByTimeAsync(800); // the token came; the attempt and its time-out start
    await vi.advanceTimersByTimeAsync(800); // the answer: 1.6 s into the call, 0.8 s into the attempt
    expect((await call).id).toBe('post_1');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('covers reading the answer with the time-out too', async () => {
    server.use(
      http.get(`${BASE}/posts/post_1`, () => {
        const stalled = new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"id":')) });
        return new HttpResponse(stalled, { headers: { 'content-type': 'application/json' } });
      }),
    );
    const call = client({ timeoutMs: 500, maxRetries: 0 }).posts.get('post_1');
    const outcome = call.catch((error: unknown) => error);
    await flushIO();
    await vi.advanceTimersByTimeAsync(500);
    expect(await outcome).toBeInstanceOf(TimeoutError);
  });
});

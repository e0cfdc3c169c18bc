/**
 * The in-process rate limiter: one backoff per user shared by every client of that user, set only by the service's
 * headers, only ever extended, waited out under the call's signal (driven by fake timers) and refused at once past
 * `maxRetryAfterMs`. The service is a `fetch` function of the test's own that counts what reaches it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PostSched, RateLimiter, RateLimitError, type RateLimitEvent, UserClients, ValidationError } from '@postsched/sdk';
import { BASE, windowService, wirePost } from '../helpers.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(new Date('2030-01-01T00:00:00.000Z'));
});
afterEach(() => vi.useRealTimers());

const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);
/** What `promise` settles to, never rejecting (the clock is driven by the test, not here). */
const settle = <T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

/** A service answering each request with the next of `answers` (the last repeats), recording who sent it and when. */
function service(...answers: Array<() => Response>) {
  const sent: Array<{ at: number; token: string | null }> = [];
  const fetch = async (request: Request) => {
    sent.push({ at: Date.now(), token: request.headers.get('authorization') });
    return answers[Math.min(sent.length, answers.length) - 1]!();
  };
  return { sent, fetch };
}
const ok = (headers: Record<string, string> = {}) => () => Response.json(wirePost(), { headers });
const limited = (headers: Record<string, string> = {}) => () => Response.json({ error: { code: 'rate_limited', message: 'slow down' } }, { status: 429, headers });

/** A UserClients whose users are connected with fresh tokens (`tok_<user>`), over `fetch`. */
async function usersOver(fetch: (request: Request) => Promise<Response>, options: { rateLimiter?: RateLimiter } = {}) {
  const users = new UserClients({ oauth: { refresh: async () => Promise.reject(new Error('no refresh')) }, baseUrl: BASE, clientOptions: { fetch }, ...options });
  for (const id of ['u1', 'u2']) await users.connect(id, { accessToken: `tok_${id}`, tokenType: 'bearer', scopes: [], expiresAt: Date.now() + 3_600_000 });
  return users;
}

describe('one backoff per user in a UserClients', () => {
  it("after a 429 with Retry-After: 2, no client of that user sends before the 2 s passed; another user's calls go", async () => {
    const { sent, fetch } = service(limited({ 'retry-after': '2' }), ok());
    const users = await usersOver(fetch);
    const first = settle(users.client('u1').posts.get('post_1'));
    await advance(0);
    expect(sent).toHaveLength(1);
    // A second client of the same user (a copy with other options) and the same client again.
    const copy = users.client('u1').withOptions({ timeoutMs: 5_000 });
    const others = [settle(copy.posts.get('post_1')), settle(users.client('u1').posts.get('post_1'))];
    const other = settle(users.client('u2').posts.get('post_1'));
    await advance(1_999);
    expect(sent.filter((r) => r.token === 'Bearer tok_u1')).toHaveLength(1);
    expect(sent.filter((r) => r.token === 'Bearer tok_u2')).toHaveLength(1);
    // Queued: the two calls the block holds (the 429'd one waits as its retry, to the millisecond).
    expect(users.rateLimit('u1')).toEqual({ blockedUntil: new Date(Date.now() + 1), queued: 2 });
    await advance(4_000); // the wait, then the held calls spread over up to one more
    expect((await Promise.all([first, ...others, other])).map((r) => r.error)).toEqual([undefined, undefined, undefined, undefined]);
    expect(sent.filter((r) => r.token === 'Bearer tok_u1').every((r, i) => i === 0 || r.at >= sent[0]!.at + 2_000)).toBe(true);
    expect(users.rateLimit('u1')).toEqual({ blockedUntil: undefined, queued: 0 });
  });

  it('holds the next calls until the reset when an answer says RateLimit-Remaining: 0', async () => {
    const { sent, fetch } = service(ok({ 'ratelimit-limit': '10', 'ratelimit-remaining': '0', 'ratelimit-reset': '3' }), ok());
    const users = await usersOver(fetch);
    await users.client('u1').posts.get('post_1');
    const next = settle(users.client('u1').posts.get('post_1'));
    await advance(2_999);
    expect(sent).toHaveLength(1);
    await advance(3_001); // the reset, then a random part of it again
    expect((await next).error).toBeUndefined();
    expect(sent).toHaveLength(2);
  });

  it('never invents a wait: a 429 without Retry-After or RateLimit-* blocks nobody (the call retries on its own backoff)', async () => {
    const { sent, fetch } = service(limited(), ok());
    const users = await usersOver(fetch);
    const first = settle(users.client('u1').posts.get('post_1'));
    await advance(0);
    expect(users.rateLimit('u1').blockedUntil).toBeUndefined();
    const second = settle(users.client('u1').posts.get('post_1'));
    await advance(0);
    expect(sent).toHaveLength(2); // sent at once
    await advance(1_000);
    expect((await first).error).toBeUndefined();
    expect((await second).error).toBeUndefined();
  });

  it('only extends a block: a shorter wait later does not shorten it', async () => {
    const { fetch } = service(limited({ 'retry-after': '5' }), limited({ 'retry-after': '1' }), ok());
    const users = await usersOver(fetch, { rateLimiter: new RateLimiter() });
    const start = Date.now();
    const copy = users.client('u1').withOptions({ maxRetries: 0 });
    // Two calls sent before either answer: the 5 s one, then the 1 s one.
    const calls = [settle(copy.posts.get('post_1')), settle(copy.posts.get('post_1'))];
    await advance(0);
    expect(users.rateLimit('u1').blockedUntil).toEqual(new Date(start + 5_000));
    await advance(6_000);
    await Promise.all(calls);
  });

  it('fails a call at once with RateLimitError (retryAt set, nothing sent) when the block is longer than maxRetryAfterMs', async () => {
    const { sent, fetch } = service(limited({ 'retry-after': '120' }), ok());
    const client = new PostSched({ baseUrl: BASE, auth: 'tok_1', fetch, maxRetryAfterMs: 60_000 });
    const first = await settle(client.posts.get('post_1'));
    expect(first.error).toBeInstanceOf(RateLimitError);
    const { error } = await settle(client.withOptions({}).posts.get('post_1'));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAt).toEqual(new Date(Date.now() + 120_000));
    expect((error as RateLimitError).message).toMatch(/nothing was sent/);
    expect(sent).toHaveLength(1);
  });

  it('keeps a block of at most a day, whatever the header says (the call itself fails with the wait it was given)', async () => {
    const { fetch } = service(limited({ 'retry-after': '99999999' }), ok());
    const client = new PostSched({ baseUrl: BASE, auth: 'tok_1', fetch });
    const { error } = await settle(client.posts.get('post_1'));
    expect((error as RateLimitError).retryAfterMs).toBe(99_999_999_000);
    expect(client.rateLimit.blockedUntil).toEqual(new Date(Date.now() + 86_400_000));
  });

  it("ends a wait on the call's signal: rejects with its reason, nothing sent, no longer queued", async () => {
    const { sent, fetch } = service(limited({ 'retry-after': '10' }), ok());
    const client = new PostSched({ baseUrl: BASE, auth: 'tok_1', fetch, maxRetries: 0 });
    await settle(client.posts.get('post_1'));
    const controller = new AbortController();
    const waiting = settle(client.posts.get('post_1', { signal: controller.signal }));
    await advance(1_000);
    expect(client.rateLimit.queued).toBe(1);
    controller.abort(new Error('user left'));
    expect((await waiting).error).toEqual(new Error('user left'));
    expect(client.rateLimit.queued).toBe(0);
    expect(sent).toHaveLength(1);
  });

  it('tells onRateLimit when a key becomes limited and when it clears, with no token in it', async () => {
    const events: RateLimitEvent[] = [];
    const { fetch } = service(limited({ 'retry-after': '2' }), ok());
    const users = await usersOver(fetch, { rateLimiter: new RateLimiter({ onRateLimit: (event) => events.push(event) }) });
    const call = settle(users.client('u1').posts.get('post_1'));
    await advance(5_000);
    expect((await call).error).toBeUndefined();
    expect(events).toEqual([
      { key: 'u1', state: 'limited', blockedUntil: new Date(Date.parse('2030-01-01T00:00:02.000Z')) },
      { key: 'u1', state: 'cleared', blockedUntil: undefined },
    ]);
    expect(JSON.stringify(events)).not.toMatch(/tok_/);
  });

  it('an onRateLimit that throws or rejects changes nothing: the call succeeds and the cleared timer does not throw', async () => {
    const told: string[] = [];
    const { sent, fetch } = service(limited({ 'retry-after': '2' }), ok());
    const onRateLimit = (event: RateLimitEvent) => {
      told.push(event.state);
      if (event.state === 'limited') throw new Error('metrics down');
      return Promise.reject(new Error('metrics down'));
    };
    const users = await usersOver(fetch, { rateLimiter: new RateLimiter({ onRateLimit }) });
    const call = settle(users.client('u1').posts.get('post_1'));
    await advance(5_000); // rethrows anything a timer threw
    expect((await call).error).toBeUndefined();
    expect(sent).toHaveLength(2);
    expect(told).toEqual(['limited', 'cleared']);
  });

  it('a `key` option widens the scope: one user limited holds every user', async () => {
    const { sent, fetch } = service(limited({ 'retry-after': '2' }), ok());
    const users = await usersOver(fetch, { rateLimiter: new RateLimiter({ key: 'app' }) });
    await settle(users.client('u1').withOptions({ maxRetries: 0 }).posts.get('post_1'));
    const other = settle(users.client('u2').posts.get('post_1'));
    await advance(1_000);
    expect(sent).toHaveLength(1);
    await advance(3_000);
    expect((await other).error).toBeUndefined();
  });
});

describe('a `key` function', () => {
  it('returning no string is refused with a ValidationError naming its result: such users never share a scope "undefined"', async () => {
    const { sent, fetch } = service(ok());
    const users = await usersOver(fetch, { rateLimiter: new RateLimiter({ key: ((userId: string) => (userId === 'u1' ? undefined : null)) as never }) });
    expect(() => users.client('u1')).toThrow(ValidationError);
    expect(() => users.client('u1')).toThrow('`key` returned undefined for a user id: it must return a string');
    expect(() => users.client('u2')).toThrow('`key` returned null');
    expect(sent).toHaveLength(0);
  });
});

describe("pacing a user's stated quota (RateLimit-Limit, -Remaining, -Reset)", () => {
  it('once a quarter of it is spent, the calls made at once go as many as the window has left, then `limit` per window: none refused', async () => {
    const service = windowService({ limit: 10, windowMs: 2_000 });
    const events: RateLimitEvent[] = [];
    const users = await usersOver(service.fetch, { rateLimiter: new RateLimiter({ onRateLimit: (event) => events.push(event) }) });
    const client = users.client('u1');
    for (let i = 0; i < 3; i++) await client.posts.get('post_1'); // remaining 9, 8, 7: a quarter spent
    const start = Date.now();
    const calls = Array.from({ length: 27 }, () => settle(client.posts.get('post_1')));
    await advance(0);
    expect(service.windows).toEqual([10]);
    // The other 20 wait for the window's end (its reset), told to the hook and seen in the state.
    expect(users.rateLimit('u1')).toEqual({ blockedUntil: new Date(start + 2_000), queued: 20 });
    expect(events).toEqual([{ key: 'u1', state: 'limited', blockedUntil: new Date(start + 2_000) }]);
    await advance(2_000);
    expect(service.windows).toEqual([10, 10]);
    await advance(2_000);
    expect(service.windows).toEqual([10, 10, 10]);
    expect((await Promise.all(calls)).filter((r) => r.error !== undefined)).toEqual([]);
    expect(service.refused()).toBe(0);
    // Each window spent is told (the third too: a call made now would wait for its end), each end too.
    expect(events.map((e) => e.state)).toEqual(['limited', 'cleared', 'limited', 'cleared', 'limited']);
  });

  it("forgets a paced user a minute after its last call: no timer is left behind", async () => {
    const service = windowService({ limit: 10, windowMs: 2_000 });
    const users = await usersOver(service.fetch);
    for (let i = 0; i < 3; i++) await users.client('u1').posts.get('post_1'); // paced
    const calls = Array.from({ length: 9 }, () => settle(users.client('u1').posts.get('post_1'))); // a window spent
    await advance(2_000);
    expect((await Promise.all(calls)).every((r) => r.error === undefined)).toBe(true);
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    await advance(62_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('counts other clients of the service: each answer lowers what is left to what the service says', async () => {
    const service = windowService({ limit: 10, windowMs: 2_000 });
    const users = await usersOver(service.fetch);
    for (let i = 0; i < 3; i++) await users.client('u1').posts.get('post_1'); // paced: 7 left
    // Another app instance (not sharing this limiter) spends 4 of them.
    for (let i = 0; i < 4; i++) await service.fetch();
    await users.client('u1').posts.get('post_1'); // its answer: 2 left
    const calls = Array.from({ length: 5 }, () => settle(users.client('u1').posts.get('post_1')));
    await advance(0);
    expect(service.windows).toEqual([10]);
    await advance(2_000);
    expect((await Promise.all(calls)).every((r) => r.error === undefined)).toBe(true);
    expect(service.refused()).toBe(0);
  });

  it('with no limit stated, a spent quota is a block: the held calls go out after the reset, spread over up to one more wait', async () => {
    const service = windowService({ limit: 2, windowMs: 2_000, stateLimit: false });
    const users = await usersOver(service.fetch);
    const client = users.client('u1');
    await client.posts.get('post_1');
    await client.posts.get('post_1'); // remaining 0, reset 2 s
    const calls = Array.from({ length: 2 }, () => settle(client.posts.get('post_1')));
    await advance(1_999);
    expect(service.windows).toEqual([2]);
    await advance(2_001);
    expect(service.windows).toEqual([2, 2]);
    expect((await Promise.all(calls)).every((r) => r.error === undefined)).toBe(true);
  });
});

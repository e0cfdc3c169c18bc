/**
 * One backoff per user across a fleet: 4 processes, 100 users, each user allowed 10 requests per 2 s window by a
 * loopback service (429 + Retry-After beyond it, RateLimit-* within), each process making 15 calls per user, 50 at a
 * time, all sharing one `RedisRateLimiter`. Counted: failed calls, requests that reached the service while their user
 * was told to wait, 429s per user per window. No time is asserted (the wall time is printed).
 *
 * What is proved, and what is only reported: every call succeeds, the 429s stay under 2 % of the calls and the requests
 * sent while blocked under 1 % (the SDK before the limiter, same rig: 608 429s, 1,071 sent while blocked, a call failed
 * with RateLimitError; with the first limiter ~200 and ~80; with each user's stated quota paced in Redis 2–8 and 0–1,
 * max 1–2 per user and window, on a machine at load 6–7). A request a process sent before it knew its user is paced can
 * still arrive in the first window (an event loop held up by the load sends it late): that is why "429s per user per
 * window ≤ 1" and "nothing sent while blocked" are reported (max, mean), not asserted.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { startRateLimitFleet } from './fleet/rate-limit-rig.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

it('4 processes, 100 users, 10 requests per 2 s each: no failed call, 429s under 2 % of the calls, sent while blocked under 1 %', { timeout: 180_000 }, async () => {
  const fleet = await startRateLimitFleet({ redisUrl: server.url, users: 100 });
  try {
    const result = await fleet.run();
    console.log(`rate-limit fleet: ${JSON.stringify({ ...result, wallMs: Math.round(result.wallMs), ratio: (result.wallMs / result.floorMs).toFixed(2) })}`);
    expect(result.failed).toEqual({});
    expect(result.succeeded).toBe(4 * 100 * 15);
    expect(result.requests - result.succeeded).toBeLessThan(0.02 * result.succeeded);
    // Only requests already on their way when their user was blocked (measured 0–1 of 6,000; before the limiter, ~1,000).
    expect(result.arrivedWhileBlocked).toBeLessThan(0.01 * result.succeeded);
  } finally {
    await fleet.stop();
  }
});

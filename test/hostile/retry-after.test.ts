/**
 * Issue 12 item 15: a Retry-After the SDK cannot read (`NaN`, `Infinity`, `1e400`, `-5`) is treated as absent,
 * so the normal backoff applies (ky alone waited `maxRetryAfterMs`, 60 s, on every retry); a delay too large for
 * a number is beyond any cap and fails at once with RateLimitError.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PostSched, RateLimitError } from '@postsched/sdk';
import { BASE, settle } from '../helpers.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(new Date('2030-01-01T00:00:00.000Z'));
});
afterEach(() => vi.useRealTimers());

function rateLimited(retryAfter: string) {
  const at: number[] = [];
  const client = new PostSched({
    baseUrl: BASE,
    auth: 'tok_1',
    maxRetries: 2,
    fetch: async () => {
      at.push(Date.now());
      return Response.json({ error: 'slow down' }, { status: 429, headers: { 'retry-after': retryAfter } });
    },
  });
  return { client, at };
}

const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('a Retry-After the SDK cannot read', () => {
  it.each(['NaN', 'Infinity', '1e400', '-5', '0x10', 'soon'])('"%s" is ignored: the backoff applies (0.5 s, then 1 s), not 60 s per retry', async (value) => {
    const { client, at } = rateLimited(value);
    const { error } = await settle(client.posts.get('post_1'), advance, 100, 100);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBeUndefined();
    expect(at).toHaveLength(3);
    const waits = [at[1]! - at[0]!, at[2]! - at[1]!];
    expect(waits[0]).toBeGreaterThanOrEqual(375); // 500 ms less up to 25 % jitter
    expect(waits[0]).toBeLessThanOrEqual(500);
    expect(waits[1]).toBeGreaterThanOrEqual(750);
    expect(waits[1]).toBeLessThanOrEqual(1_000);
  });

  it('a delay of 400 digits is beyond the cap: RateLimitError at once, one request', async () => {
    const { client, at } = rateLimited('9'.repeat(400));
    const { error } = await settle(client.posts.get('post_1'), advance, 100, 10);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
    expect(at).toHaveLength(1);
  });

  it('a readable Retry-After is still honoured to the millisecond, without jitter', async () => {
    const { client, at } = rateLimited('2');
    await settle(client.posts.get('post_1'), advance, 100, 100);
    expect(at).toHaveLength(3);
    expect([at[1]! - at[0]!, at[2]! - at[1]!]).toEqual([2_000, 2_000]);
  });
});

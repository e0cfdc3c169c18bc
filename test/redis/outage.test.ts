/**
 * Redis unreachable longer than a refresh's lease while the holder saves refreshed tokens: the lease expires, another
 * process takes it; it must not refresh with the refresh token the holder's refresh rotated out (the service revokes
 * the grant): it waits for the holder's save, which lands once Redis is back. Short leases, no 40 s waits.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { outagePastLease } from '../hostile/outage-rig.js';
import { type RedisServer, startRedisServer } from './redis-server.js';

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

describe('Redis unreachable past the lease during a save', () => {
  it('logs nobody out: the process that takes the expired lease waits for the holder to save its rotation', { timeout: 60_000 }, async () => {
    let down = false;
    // Every command of the stores fails while Redis is "down" (its connection closed).
    const failing = { call: (...args: [string, ...string[]]) => (down ? Promise.reject(new Error('Connection is closed.')) : redis.call(...args)) };
    const key = (user: string) => `outage:{${user}}`;
    const result = await outagePastLease(
      {
        // A lease of at least twice the holder's save retries (a second apart at most): the taker waits one lease for it.
        store: (user) => new RedisTokenStore({ redis: failing as never, key: key(user), lockTtlMs: 2_000, encryptionKey: Buffer.alloc(32, 3) }),
        setDown: (value) => (down = value),
        async leaseExpired(user) {
          while ((await redis.pttl(`${key(user)}:lock`)) !== -2) await new Promise((resolve) => setTimeout(resolve, 50));
        },
      },
      ['u1', 'u2', 'u3'],
    );
    expect(result.loggedOut).toBe(0);
    expect(result.refreshes).toBe(3); // one per user: the next process used the holder's tokens
    expect(result.next).toEqual(['at_u1_2', 'at_u2_2', 'at_u3_2']);
  });
});

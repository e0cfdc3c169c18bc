/**
 * `UserClients` under load with a cache far smaller than the user base: 500 users, at most 50 cached, calls 50 at a
 * time in shuffled order, every access token expiring three times during the run. The service rotates refresh tokens
 * and revokes the grant when a rotated-out one comes back, so two managers refreshing one user would log them out;
 * each refresh takes up to 20 ms, so many users pass through the cache while one refreshes.
 * Counts, never times: no failed call, no user logged out, exactly one refresh per user per expiry.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryTokenStore, UserClients, type UserClientsOptions } from '@postsched/sdk';
import { createRig } from './rig.js';

const USERS = 500;
const MAX_USERS = 50;
const CONCURRENCY = 50;
const EXPIRIES = 3;
const CALLS_PER_USER = 3; // per expiry
const HOUR_MS = 3_600_000;
/** Refreshes take up to this long, so many users come and go while one refreshes. */
const REFRESH_LATENCY_MS = 20;

afterEach(() => {
  vi.useRealTimers();
});

describe('UserClients eviction under load', () => {
  it.each([
    ['with the default in-memory stores', false],
    ['with a store per user from a store factory', true],
  ])(`${USERS} users, maxUsers ${MAX_USERS}, concurrency ${CONCURRENCY}, ${EXPIRIES} expiries: no failure, one refresh per user per expiry (%s)`, async (_name, withFactory) => {
    vi.useFakeTimers({ toFake: ['Date'] }); // the SDK's clock; timers stay real
    const rig = createRig();
    rig.refreshLatencyMs = REFRESH_LATENCY_MS;
    const stores = new Map<string, MemoryTokenStore>();
    const logout: string[] = [];
    const options: UserClientsOptions = {
      oauth: rig.refresher,
      baseUrl: rig.fake.baseUrl,
      clientOptions: { fetch: rig.fetch },
      maxUsers: MAX_USERS,
      onReauthorizationRequired: (userId) => void logout.push(userId),
    };
    if (withFactory) options.store = (userId) => stores.get(userId) ?? new MemoryTokenStore();
    const users = new UserClients(options);
    const ids = Array.from({ length: USERS }, (_, i) => `user_${i}`);
    for (const userId of ids) {
      const tokens = rig.tokensFor(userId, false);
      if (withFactory) stores.set(userId, new MemoryTokenStore(tokens));
      else await users.connect(userId, tokens);
    }

    let calls = 0;
    const failures: string[] = [];
    for (let expiry = 0; expiry < EXPIRIES; expiry++) {
      // Every access token expires, for the SDK and for the service.
      vi.setSystemTime(Date.now() + HOUR_MS);
      await rig.fake.clock.advance(HOUR_MS);
      const order = shuffle(ids.flatMap((userId) => Array<string>(CALLS_PER_USER).fill(userId)));
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let i = next++; i < order.length; i = next++) {
            calls++;
            try {
              await users.client(order[i] as string).accounts.list().toArray();
            } catch (error) {
              failures.push(`${order[i]}: ${(error as Error).name}: ${(error as Error).message}`);
            }
          }
        }),
      );
      expect(users.size).toBeLessThanOrEqual(MAX_USERS);
    }

    expect(calls).toBe(USERS * CALLS_PER_USER * EXPIRIES);
    expect(failures.slice(0, 5)).toEqual([]);
    expect(logout).toEqual([]);
    expect(rig.reused).toBe(0);
    const perUser = ids.map((userId) => rig.refreshes.get(userId) ?? 0);
    expect(perUser.filter((count) => count !== EXPIRIES)).toEqual([]);
    expect(rig.fake.stats.tokenRequests.refresh_token).toBe(USERS * EXPIRIES);
    await users[Symbol.asyncDispose]();
  }, 120_000);
});

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

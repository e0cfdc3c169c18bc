/**
 * Where the service answers an `expires_in` shorter than `refreshMarginMs` (a grant's last minutes), the margin is at
 * most half the token's lifetime in every process: counted from when a manager obtained the token, or first read it
 * from the store. Other processes use the token they read instead of refreshing on every call. Counted in refreshes.
 */
import { describe, expect, it } from 'vitest';
import { MemoryTokenStore, TokenManager, type TokenRefresher, type TokenSet } from '@postsched/sdk';

describe('a token shorter than the refresh margin', () => {
  it('4 processes sharing a store, 10 calls each: 1 refresh, by the first process (the others use the token they read)', async () => {
    let refreshes = 0;
    // One refresher per process: a process's memory of rotations is its own.
    const process = (): TokenRefresher => ({
      async refresh(previous) {
        refreshes++;
        return { ...previous, accessToken: `at_${refreshes}`, refreshToken: `rt_${refreshes}`, expiresAt: Date.now() + 30_000 };
      },
    });
    const expired: TokenSet = { accessToken: 'at_0', refreshToken: 'rt_0', expiresAt: Date.now() - 1_000, scopes: [], tokenType: 'bearer' };
    let queue = Promise.resolve();
    const store = Object.assign(new MemoryTokenStore(expired), {
      lock: <T>(fn: () => Promise<T>) => {
        const run = queue.then(fn);
        queue = run.then(() => {}, () => {});
        return run;
      },
    });
    const managers = Array.from({ length: 4 }, () => new TokenManager({ oauth: process(), store, refreshMarginMs: 60_000 }));
    const tokens = new Set<string>();
    for (let call = 0; call < 10; call++) for (const manager of managers) tokens.add(await manager.getAccessToken());
    expect(refreshes).toBe(1);
    expect([...tokens]).toEqual(['at_1']);
  });
});

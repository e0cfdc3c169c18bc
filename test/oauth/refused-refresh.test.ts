/**
 * A refresh token the service refused is never sent again by this process ("one refused attempt per process, no
 * loop"): later calls re-read the store, and fail at once with ReauthorizationRequiredError while it still holds the
 * refused token; tokens another process stored meanwhile are used.
 */
import { describe, expect, it } from 'vitest';
import { MemoryTokenStore, ReauthorizationRequiredError, TokenManager, type TokenRefresher, type TokenSet, type TokenStore } from '@postsched/sdk';

const expired = (rt: string): TokenSet => ({ accessToken: `at_${rt}`, refreshToken: rt, expiresAt: Date.now() - 1_000, scopes: ['posts:read'], tokenType: 'bearer' });

/** A token endpoint that refuses every refresh token but `valid`. */
function endpoint(valid: string) {
  const sent: string[] = [];
  const oauth: TokenRefresher = {
    async refresh(previous) {
      sent.push(previous.refreshToken as string);
      if (previous.refreshToken !== valid) throw new ReauthorizationRequiredError('invalid_grant');
      return { accessToken: 'at_new', refreshToken: 'rt_new', expiresAt: Date.now() + 3_600_000, scopes: previous.scopes, tokenType: 'bearer' };
    },
  };
  return { oauth, sent };
}

describe('a refused refresh token', () => {
  it.each([
    ['MemoryTokenStore', false, false],
    ['MemoryTokenStore with a lock', false, true],
    // The store keeps no mark of the dead grant (getGrant, markReauthorizationRequired): the process remembers it.
    ['a store of get and set only', true, false],
    ['a store of get, set and lock only', true, true],
  ])('is sent once: the 10 calls after the refusal fail without a token request (%s)', async (_, plain, locking) => {
    const { oauth, sent } = endpoint('rt_other');
    const memory = new MemoryTokenStore(expired('rt_dead'));
    const store: TokenStore = plain ? { get: () => memory.get(), set: (tokens, options) => memory.set(tokens, options) } : memory;
    const shared = locking ? Object.assign(store, { lock: <T>(fn: () => Promise<T>) => fn() }) : store;
    const manager = new TokenManager({ oauth, store: shared });
    const errors: unknown[] = [];
    for (let call = 0; call < 11; call++) errors.push(await manager.getAccessToken().catch((e: unknown) => e));
    expect(errors.filter((e) => e instanceof ReauthorizationRequiredError && e.reason === 'invalid_grant')).toHaveLength(11);
    expect(sent).toEqual(['rt_dead']);
    // Another manager of the process (made per request) does not send it either.
    await new TokenManager({ oauth, store }).getAccessToken().catch(() => {});
    expect(sent).toEqual(['rt_dead']);
  });

  it('is not held against tokens another process stored since: those are used', async () => {
    const { oauth, sent } = endpoint('rt_other');
    const store = new MemoryTokenStore(expired('rt_dead'));
    const manager = new TokenManager({ oauth, store });
    await expect(manager.getAccessToken()).rejects.toBeInstanceOf(ReauthorizationRequiredError);
    await store.set(expired('rt_other')); // the user connected again, in another process
    expect(await manager.getAccessToken()).toBe('at_new');
    expect(sent).toEqual(['rt_dead', 'rt_other']);
  });
});

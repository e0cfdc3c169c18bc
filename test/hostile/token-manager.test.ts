/**
 * Issue 12, the token manager under an unlucky or hostile store and service: items 2 (a rotation is never lost),
 * 3 (hanging dependencies are bounded), 5 (tiny or huge `expires_in`), 9 (abort during a refresh) and 14 (a store
 * returning garbage).
 */
import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { MemoryTokenStore, OAuthClient, PostSched, TokenManager, TokenStoreError, type TokenSet, type TokenStore } from '@postsched/sdk';
import { startServer } from './server.js';
import { RecordingStore, RotatingService } from './rotation-rig.js';

const never = () => new Promise<never>(() => {});


/** Two managers on one store whose first write reaches the store and then reports a failure (a time-out). */
function twoManagersWhoseFirstWriteLandsThenFails() {
  const service = new RotatingService();
  const store = new RecordingStore(new MemoryTokenStore(service.initial()));
  let calls = 0;
  store.onSet = () => (++calls === 1 ? 'land-then-fail' : undefined);
  return { store, first: new TokenManager({ oauth: service, store }), second: new TokenManager({ oauth: service, store }) };
}
describe('a rotated refresh token is never lost (item 2, two managers on one store)', () => {
  it('onTokens fails once: the manager does not later write its older tokens over the newer rotation', async () => {
    const service = new RotatingService();
    const store = new RecordingStore(new MemoryTokenStore(service.initial()));
    let failOnce = true;
    const first = new TokenManager({
      oauth: service,
      store,
      onTokens: () => {
        if (failOnce) {
          failOnce = false;
          throw new Error('database unavailable');
        }
      },
    });
    const second = new TokenManager({ oauth: service, store });

    await expect(first.getAccessToken()).rejects.toBeInstanceOf(TokenStoreError); // rt_2 stored, onTokens failed
    expect(await second.forceRefresh('at_2')).toBe('at_3'); // the other process rotates rt_2 → rt_3
    expect(await first.getAccessToken()).toBe('at_3');
    expect((await store.get())?.refreshToken).toBe('rt_3');
    expect(store.written).toEqual(['rt_2', 'rt_3']);
    expect(store.monotonic()).toBe(true);
    expect(await second.forceRefresh('at_3')).toBe('at_4'); // the stored refresh token still works
  });

  it('a write that failed but landed: settled by re-reading, never repeated over a newer rotation', async () => {
    const { store, first, second } = twoManagersWhoseFirstWriteLandsThenFails();

    await expect(first.getAccessToken()).rejects.toBeInstanceOf(TokenStoreError); // rt_2 landed, the call failed
    expect(await second.forceRefresh('at_2')).toBe('at_3');
    expect(await first.getAccessToken()).toBe('at_3');
    expect(store.written).toEqual(['rt_2', 'rt_3']);
    expect(await second.forceRefresh('at_3')).toBe('at_4');
  });

  it('getTokens() after a failed save gives the newest tokens: the pending ones, or the store\'s once it moved past them', async () => {
    const { first, second } = twoManagersWhoseFirstWriteLandsThenFails();
    await expect(first.getAccessToken()).rejects.toBeInstanceOf(TokenStoreError);
    expect((await first.getTokens())?.refreshToken).toBe('rt_2');
    await second.forceRefresh('at_2');
    expect((await first.getTokens())?.refreshToken).toBe('rt_3');
  });

  it('a write that failed and did not land is written again before the tokens are used', async () => {
    const service = new RotatingService();
    const store = new RecordingStore(new MemoryTokenStore(service.initial()));
    let calls = 0;
    store.onSet = () => {
      if (++calls === 1) throw new Error('connection reset');
    };
    const manager = new TokenManager({ oauth: service, store });
    await expect(manager.getAccessToken()).rejects.toBeInstanceOf(TokenStoreError);
    expect(await manager.getAccessToken()).toBe('at_2');
    expect(store.written).toEqual(['rt_2']);
    expect(service.refreshes).toBe(1); // rt_2 was kept, not thrown away for another rotation
  });

  it('a store that refuses every write yet keeps returning replaced tokens: a TokenStoreError, not an endless write loop', async () => {
    const service = new RotatingService();
    const first = new TokenManager({ oauth: service, store: new MemoryTokenStore(service.initial()) });
    expect(await first.getAccessToken()).toBe('at_2'); // the process has seen rt_1 replaced by rt_2
    let gets = 0;
    const lying: TokenStore = {
      // Stops lying after 50 reads, so that a loop ends this test instead of hanging it.
      get: async () => (++gets > 50 ? undefined : service.initial()),
      set: async () => false,
    };
    const error = await new TokenManager({ oauth: service, store: lying }).getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect(error).toMatchObject({ operation: 'set' });
    expect(gets).toBeLessThanOrEqual(4);
    expect(service.refreshes).toBe(1); // rt_1, seen replaced, was never sent
  });

  it('MemoryTokenStore refuses a compare-and-set whose expected refresh token is not the stored one', async () => {
    const store = new MemoryTokenStore({ accessToken: 'at_3', refreshToken: 'rt_3', expiresAt: Date.now() + 3_600_000, scopes: [], tokenType: 'bearer' });
    const older = { accessToken: 'at_2', refreshToken: 'rt_2', expiresAt: Date.now() + 3_600_000, scopes: [], tokenType: 'bearer' as const };
    expect(await store.set(older, { expectedRefreshToken: 'rt_1' })).toBe(false);
    expect((await store.get())?.refreshToken).toBe('rt_3');
    expect(await store.set({ ...older, accessToken: 'at_4', refreshToken: 'rt_4' }, { expectedRefreshToken: 'rt_3' })).toBe(true);
  });
});

describe('dependencies that never answer are bounded, and the manager recovers (item 3)', () => {
  function hanging(overrides: Partial<Record<'get' | 'set', boolean>>, inner: TokenStore): TokenStore & { heal(): void } {
    let broken = true;
    return {
      get: () => (broken && overrides.get ? never() : inner.get()),
      set: (tokens, options) => (broken && overrides.set ? never() : inner.set(tokens, options)),
      heal: () => (broken = false),
    };
  }

  it.each(['get', 'set'] as const)('store.%s that never settles: TokenStoreError after storeTimeoutMs, then it works again', async (operation) => {
    const service = new RotatingService();
    const store = hanging({ [operation]: true }, new MemoryTokenStore(service.initial()));
    const manager = new TokenManager({ oauth: service, store, storeTimeoutMs: 50 });
    const error = await manager.getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect(error).toMatchObject({ operation });
    expect((error as Error).message).toContain('storeTimeoutMs');
    store.heal();
    expect(await manager.getAccessToken()).toBe('at_2');
  });

  it('onTokens that never settles: TokenStoreError, then the tokens are saved on the next call', async () => {
    const service = new RotatingService();
    let hang = true;
    const saved: string[] = [];
    const manager = new TokenManager({
      oauth: service,
      store: new MemoryTokenStore(service.initial()),
      storeTimeoutMs: 50,
      onTokens: (tokens) => (hang ? never() : void saved.push(tokens.refreshToken ?? '')),
    });
    await expect(manager.getAccessToken()).rejects.toMatchObject({ operation: 'onTokens' });
    hang = false;
    expect(await manager.getAccessToken()).toBe('at_2');
    expect(saved).toEqual(['rt_2']);
    expect(service.refreshes).toBe(1);
  });

  it('a lock that is never granted: TokenStoreError after lockTimeoutMs; a lock granted late runs nothing', async () => {
    const service = new RotatingService();
    const inner = new MemoryTokenStore(service.initial());
    let grant: (() => void) | undefined;
    let hang = true;
    const store: TokenStore = {
      get: () => inner.get(),
      set: (t, o) => inner.set(t, o),
      lock: async <T>(fn: () => Promise<T>) => {
        if (hang) await new Promise<void>((resolve) => (grant = resolve));
        return fn();
      },
    };
    const manager = new TokenManager({ oauth: service, store, lockTimeoutMs: 50 });
    await expect(manager.getAccessToken()).rejects.toMatchObject({ operation: 'lock' });
    hang = false;
    grant?.(); // the first lock is granted after the manager gave up: it must not refresh
    expect(await manager.getAccessToken()).toBe('at_2');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(service.refreshes).toBe(1);
  });

  it('a lock whose release never settles: the refresh inside it still answers, and later calls are not stuck behind it', async () => {
    const service = new RotatingService();
    const inner = new MemoryTokenStore(service.initial());
    let hang = true;
    const store: TokenStore = {
      get: () => inner.get(),
      set: (t, o) => inner.set(t, o),
      lock: async <T>(fn: () => Promise<T>) => {
        const result = await fn();
        if (hang) await never(); // the release (a DEL on a store that stopped answering) never comes back
        return result;
      },
    };
    const manager = new TokenManager({ oauth: service, store, lockTimeoutMs: 5_000, storeTimeoutMs: 50 });
    expect(await manager.getAccessToken()).toBe('at_2');
    expect((await inner.get())?.refreshToken).toBe('rt_2');
    hang = false;
    expect(await manager.forceRefresh('at_2')).toBe('at_3'); // the next refresh runs: nothing waits on the first lock
    expect(service.refreshes).toBe(2);
  });
});

describe('expires_in far too short or far too long (item 5)', () => {
  it.each([0, 30_000, 0.1])('a token lasting %s ms is not refreshed on every call: 50 calls, at most 2 refreshes', async (lifetimeMs) => {
    const service = new RotatingService(lifetimeMs);
    const manager = new TokenManager({ oauth: service, store: new MemoryTokenStore(service.initial()) });
    for (let i = 0; i < 50; i++) await manager.getAccessToken();
    expect(service.refreshes).toBeLessThanOrEqual(2);
  });

  it('a 30 s token is used until 15 s before it expires (half its lifetime), then refreshed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const service = new RotatingService(30_000);
      const manager = new TokenManager({ oauth: service, store: new MemoryTokenStore(service.initial()) });
      expect(await manager.getAccessToken()).toBe('at_2');
      vi.setSystemTime(Date.now() + 14_000);
      expect(await manager.getAccessToken()).toBe('at_2');
      vi.setSystemTime(Date.now() + 2_000); // 14 s left: inside the 15 s margin
      expect(await manager.getAccessToken()).toBe('at_3');
      expect(service.refreshes).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('setTokens refuses an expiresAt outside what a Date can hold, and inspect never throws', async () => {
    const manager = new TokenManager({ oauth: new RotatingService() });
    const huge: TokenSet = { accessToken: 'at', refreshToken: 'rt', expiresAt: 1e308, scopes: [], tokenType: 'bearer' };
    await expect(manager.setTokens(huge)).rejects.toThrow(/expiresAt/);
    expect(() => inspect(new MemoryTokenStore(huge))).not.toThrow();
  });
});

describe('an abort while a refresh is in flight (item 9)', () => {
  it('rejects the call at once with the abort reason instead of waiting for the refresh', async () => {
    const manager = new TokenManager({
      oauth: { refresh: () => never() },
      store: new MemoryTokenStore({ accessToken: 'at_1', refreshToken: 'rt_1', expiresAt: Date.now() - 1, scopes: [], tokenType: 'bearer' }),
    });
    const client = new PostSched({ baseUrl: 'https://api.example', auth: manager, fetch: async () => Response.json({}) });
    const controller = new AbortController();
    const call = client.posts.get('post_1', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user navigated away')), 20);
    await expect(call).rejects.toThrow('user navigated away');
  });

  it('a time-out ends the wait for a refresh too', async () => {
    const manager = new TokenManager({
      oauth: { refresh: () => never() },
      store: new MemoryTokenStore({ accessToken: 'at_1', refreshToken: 'rt_1', expiresAt: Date.now() - 1, scopes: [], tokenType: 'bearer' }),
    });
    const client = new PostSched({ baseUrl: 'https://api.example', auth: manager, timeoutMs: 50, maxRetries: 0, fetch: async () => Response.json({}) });
    await expect(client.posts.get('post_1')).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});

describe('a store that returns garbage (item 14)', () => {
  it.each([
    ['null', null, /returned null; return undefined/],
    ['a JSON string', JSON.stringify({ accessToken: 'at_secret_9', expiresAt: 1, scopes: [], tokenType: 'bearer' }), /string.*JSON\.parse/],
    ['a number as the access token', { accessToken: 42, refreshToken: 'rt', expiresAt: Date.now() + 3_600_000, scopes: [], tokenType: 'bearer' }, /accessToken.*a number/],
    ['an array', [], /array|accessToken/],
  ])('get() returning %s: TokenStoreError saying what is wrong, no token handed out', async (_what, value, message) => {
    const store = { get: async () => value, set: async () => undefined } as unknown as TokenStore;
    const manager = new TokenManager({ oauth: new RotatingService(), store });
    const error = await manager.getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect((error as TokenStoreError).operation).toBe('get');
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('at_secret_9');
  });
});

describe('expires_in from the token endpoint outside any sane range (item 5)', () => {
  it.each([
    [1e308, 365 * 24 * 3600 * 1000],
    [0, 0],
  ])('expires_in %s is clamped: expiresAt stays a finite date (within %s ms), JSON and inspect work', async (expiresIn, maxLifetimeMs) => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"access_token":"at_x","token_type":"Bearer","refresh_token":"rt_x","expires_in":${expiresIn}}`);
    });
    try {
      const oauth = new OAuthClient({ baseUrl: server.url, clientId: 'app', clientSecret: 'cs', redirectUri: 'http://127.0.0.1/cb' });
      const before = Date.now();
      const tokens = await oauth.refresh('rt_0');
      expect(Number.isFinite(tokens.expiresAt)).toBe(true);
      expect(tokens.expiresAt).toBeGreaterThanOrEqual(before);
      expect(tokens.expiresAt).toBeLessThanOrEqual(Date.now() + maxLifetimeMs);
      expect(JSON.parse(JSON.stringify(tokens)).expiresAt).toBe(tokens.expiresAt);
      const manager = new TokenManager({ oauth });
      await manager.setTokens(tokens);
      expect(inspect(manager)).toContain('expiresAt');
    } finally {
      await server.close();
    }
  });
});

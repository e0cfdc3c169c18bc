import { HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  MemoryTokenStore,
  PostSchedError,
  OAuthResponseError,
  ReauthorizationRequiredError,
  TokenManager,
  TokenStoreError,
  ValidationError,
  type TokenSet,
  type TokenStore,
} from '@postsched/sdk';
import { MARK, caught, deferred, expectNoSecretsInCollectedErrors, makeClient, tokenBody, tokenSet, useTokenEndpoint } from './helpers.js';

const endpoint = useTokenEndpoint();
const HOUR = 3_600_000;

afterEach(() => {
  vi.useRealTimers();
});

/** A store that counts its calls, to prove the hot path never reaches it. */
class CountingStore implements TokenStore {
  gets = 0;
  sets: TokenSet[] = [];
  constructor(public tokens: TokenSet | undefined) {}
  async get() {
    this.gets++;
    return this.tokens;
  }
  async set(tokens: TokenSet) {
    this.sets.push(tokens);
    this.tokens = tokens;
  }
}

/** A store shared by several managers (as Redis would be across processes), with a lock. */
class LockingStore extends CountingStore {
  locked = false;
  #tail: Promise<unknown> = Promise.resolve();
  lock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(async () => {
      this.locked = true;
      try {
        return await fn();
      } finally {
        this.locked = false;
      }
    });
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

const expired = () => tokenSet('old', Date.now() - 1);
const fresh = (n: number | string) => tokenSet(n, Date.now() + HOUR);

describe('TokenManager.getAccessToken', () => {
  it('returns a fresh token from its cache: no store read, no request, no timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval'] });
    const store = new CountingStore(fresh(1));
    const manager = new TokenManager({ oauth: makeClient(), store });
    expect(await manager.getAccessToken()).toBe(`at_${MARK}_1`);
    for (let i = 0; i < 100; i++) expect(await manager.getAccessToken()).toBe(`at_${MARK}_1`);
    expect(store.gets).toBe(1);
    expect(endpoint.tokenRequests).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('refreshes once when 1,000 calls arrive with an expired token, and all get the new token', async () => {
    const release = deferred();
    endpoint.onToken(async () => {
      await release.promise;
      return HttpResponse.json(tokenBody(2));
    });
    const store = new CountingStore(expired());
    const manager = new TokenManager({ oauth: makeClient(), store });
    const calls = Array.from({ length: 1000 }, () => manager.getAccessToken());
    release.resolve();
    const tokens = await Promise.all(calls);
    expect(new Set(tokens)).toEqual(new Set([`at_${MARK}_2`]));
    expect(endpoint.tokenRequests).toHaveLength(1);
    expect(endpoint.tokenRequests[0]!.get('refresh_token')).toBe(`rt_${MARK}_old`);
    expect(store.sets).toHaveLength(1);
    expect(store.tokens).toMatchObject({ accessToken: `at_${MARK}_2`, refreshToken: `rt_${MARK}_2` });
  });

  it('tries again on the next call after a failed refresh', async () => {
    endpoint.onToken(() => HttpResponse.html('<h1>down</h1>', { status: 503 }));
    const manager = new TokenManager({ oauth: makeClient(), store: new MemoryTokenStore(expired()) });
    const failures = await Promise.all([caught(manager.getAccessToken()), caught(manager.getAccessToken())]);
    for (const error of failures) expect(error).toBeInstanceOf(OAuthResponseError);
    expect(endpoint.tokenRequests).toHaveLength(1);

    endpoint.answerJson(tokenBody(3));
    expect(await manager.getAccessToken()).toBe(`at_${MARK}_3`);
    expect(endpoint.tokenRequests).toHaveLength(2);
  });

  it('refreshes exactly at expiresAt − refreshMarginMs, not 1 ms before', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.UTC(2030, 0, 1);
    vi.setSystemTime(start);
    endpoint.answerJson(tokenBody(2));
    const tokens = tokenSet(1, start + HOUR);
    const manager = new TokenManager({ oauth: makeClient(), store: new MemoryTokenStore(tokens), refreshMarginMs: 120_000 });

    expect(await manager.getAccessToken()).toBe(`at_${MARK}_1`);
    vi.setSystemTime(tokens.expiresAt - 120_000 - 1);
    expect(await manager.getAccessToken()).toBe(`at_${MARK}_1`);
    expect(endpoint.tokenRequests).toHaveLength(0);

    vi.setSystemTime(tokens.expiresAt - 120_000);
    expect(await manager.getAccessToken()).toBe(`at_${MARK}_2`);
    expect(endpoint.tokenRequests).toHaveLength(1);
  });

  it('saves the new tokens (store.set, then onTokens, both awaited) before handing out the access token', async () => {
    endpoint.answerJson(tokenBody(2));
    const events: string[] = [];
    const store = new CountingStore(expired());
    const set = store.set.bind(store);
    store.set = async (tokens) => {
      events.push('store.set');
      await set(tokens);
    };
    const manager = new TokenManager({
      oauth: makeClient(),
      store,
      onTokens: async (tokens) => {
        events.push(`onTokens:start ${tokens.refreshToken === `rt_${MARK}_2` ? 'rotated' : 'old'}`);
        // A macrotask: every pending microtask runs first, so a token handed out early would show up before the end.
        await new Promise((resolve) => setImmediate(resolve));
        events.push('onTokens:end');
      },
    });
    await manager.getAccessToken().then(() => events.push('token handed out'));
    expect(events).toEqual(['store.set', 'onTokens:start rotated', 'onTokens:end', 'token handed out']);
  });

  it('raises ReauthorizationRequiredError on invalid_grant when the store still holds the refused refresh token, and keeps the tokens', async () => {
    endpoint.answerJson({ error: 'invalid_grant', error_description: 'revoked' }, 400);
    const before = expired();
    const store = new CountingStore(before);
    const manager = new TokenManager({ oauth: makeClient(), store });
    const error = await caught(manager.getAccessToken());
    expect(error).toBeInstanceOf(ReauthorizationRequiredError);
    expect((error as ReauthorizationRequiredError).reason).toBe('invalid_grant');
    expect(store.tokens).toEqual(before); // nothing deleted
    expect(store.sets).toHaveLength(0);
  });

  it('uses the tokens another process stored while its own refresh failed with invalid_grant', async () => {
    const store = new CountingStore(expired());
    endpoint.onToken(() => {
      // Another process rotated the refresh token first: ours is now refused.
      store.tokens = fresh('other');
      return HttpResponse.json({ error: 'invalid_grant' }, { status: 400 });
    });
    const manager = new TokenManager({ oauth: makeClient(), store });
    expect(await manager.getAccessToken()).toBe(`at_${MARK}_other`);
    expect(endpoint.tokenRequests).toHaveLength(1);
    expect(store.sets).toHaveLength(0);
  });

  it('refreshes with the newer refresh token when the one another process stored is already expired', async () => {
    const store = new CountingStore(expired());
    endpoint.onToken(() => {
      if (endpoint.tokenRequests.length === 1) {
        store.tokens = tokenSet('other', Date.now() - 1);
        return HttpResponse.json({ error: 'invalid_grant' }, { status: 400 });
      }
      return HttpResponse.json(tokenBody(3));
    });
    const manager = new TokenManager({ oauth: makeClient(), store });
    expect(await manager.getAccessToken()).toBe(`at_${MARK}_3`);
    expect(endpoint.tokenRequests.map((form) => form.get('refresh_token'))).toEqual([`rt_${MARK}_old`, `rt_${MARK}_other`]);
  });

  it('says so when no tokens are stored, or the expired token has no refresh token', async () => {
    const none = await caught(new TokenManager({ oauth: makeClient() }).getAccessToken());
    expect(none).toMatchObject({ name: 'ReauthorizationRequiredError', reason: 'no_tokens' });
    expect(none.message).toContain('setTokens');

    const { refreshToken: _, ...noRefresh } = expired();
    const manager = new TokenManager({ oauth: makeClient(), store: new MemoryTokenStore(noRefresh) });
    expect(await caught(manager.getAccessToken())).toMatchObject({ reason: 'no_refresh_token' });
    expect(endpoint.tokenRequests).toHaveLength(0);
  });
});

describe('TokenManager.forceRefresh', () => {
  it('returns the newer token the store already holds without refreshing', async () => {
    const store = new CountingStore(fresh(1));
    const manager = new TokenManager({ oauth: makeClient(), store });
    await manager.getAccessToken();
    store.tokens = fresh(2); // another process refreshed after our request left
    expect(await manager.forceRefresh(`at_${MARK}_1`)).toBe(`at_${MARK}_2`);
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('refreshes once for 50 concurrent 401s on the same token, even though that token looks fresh', async () => {
    endpoint.answerJson(tokenBody(2));
    const manager = new TokenManager({ oauth: makeClient(), store: new MemoryTokenStore(fresh(1)) });
    const rejected = await manager.getAccessToken();
    const tokens = await Promise.all(Array.from({ length: 50 }, () => manager.forceRefresh(rejected)));
    expect(new Set(tokens)).toEqual(new Set([`at_${MARK}_2`]));
    expect(endpoint.tokenRequests).toHaveLength(1);
    expect(await manager.getAccessToken()).toBe(`at_${MARK}_2`);
  });

  it('answers from the cache when a newer token was already obtained', async () => {
    endpoint.answerJson(tokenBody(2));
    const store = new CountingStore(fresh(1));
    const manager = new TokenManager({ oauth: makeClient(), store });
    await manager.forceRefresh(`at_${MARK}_1`);
    const gets = store.gets;
    expect(await manager.forceRefresh(`at_${MARK}_1`)).toBe(`at_${MARK}_2`); // a late 401 for the old token
    expect(store.gets).toBe(gets);
    expect(endpoint.tokenRequests).toHaveLength(1);
  });
});

describe('TokenManager with a shared store', () => {
  it('refreshes once across managers sharing a locking store, inside the lock, and the others use its result', async () => {
    const store = new LockingStore(expired());
    const lockedDuringRefresh: boolean[] = [];
    endpoint.onToken(() => {
      lockedDuringRefresh.push(store.locked);
      return HttpResponse.json(tokenBody(2));
    });
    const managers = Array.from({ length: 3 }, () => new TokenManager({ oauth: makeClient(), store }));
    const tokens = await Promise.all(managers.flatMap((manager) => Array.from({ length: 100 }, () => manager.getAccessToken())));
    expect(new Set(tokens)).toEqual(new Set([`at_${MARK}_2`]));
    expect(endpoint.tokenRequests).toHaveLength(1);
    expect(lockedDuringRefresh).toEqual([true]);
    expect(store.sets).toHaveLength(1);
  });

  it('keeps tokens whose saving failed, and saves them before using them instead of refreshing again', async () => {
    endpoint.answerJson(tokenBody(2));
    const store = new CountingStore(expired());
    let failSet = true;
    const set = store.set.bind(store);
    store.set = async (tokens) => {
      if (failSet) throw new Error(`redis down while writing ${tokens.refreshToken}`);
      await set(tokens);
    };
    const manager = new TokenManager({ oauth: makeClient(), store });
    const error = await caught(manager.getAccessToken());
    expect(error).toBeInstanceOf(TokenStoreError);
    expect((error as TokenStoreError).operation).toBe('set');
    expect(error.cause).toBeUndefined();
    expect(error.message).toContain('redis down while writing [redacted]');

    failSet = false;
    expect(await manager.getAccessToken()).toBe(`at_${MARK}_2`);
    expect(store.tokens?.refreshToken).toBe(`rt_${MARK}_2`);
    expect(endpoint.tokenRequests).toHaveLength(1); // the rotated refresh token was not lost
  });

  it('keeps the unsaved refresh token when the app mutates the TokenSet getTokens() gave it meanwhile', async () => {
    endpoint.answerJson(tokenBody(2));
    const store = new MemoryTokenStore(expired());
    let failSet = true;
    const set = store.set.bind(store);
    store.set = async (tokens, options) => {
      if (failSet) throw new Error('store down');
      return set(tokens, options);
    };
    const manager = new TokenManager({ oauth: makeClient(), store });
    expect(await caught(manager.getAccessToken())).toBeInstanceOf(TokenStoreError);
    const shown = (await manager.getTokens()) as TokenSet;
    expect(shown.refreshToken).toBe(`rt_${MARK}_2`);
    delete shown.refreshToken; // e.g. before showing the tokens to the user
    shown.accessToken = 'hidden';

    failSet = false;
    expect(await manager.getAccessToken()).toBe(`at_${MARK}_2`);
    expect((await store.get())?.refreshToken).toBe(`rt_${MARK}_2`);
  });

  it("passes the store's own typed SDK errors through, so a user can catch them by class", async () => {
    class StoreUnavailable extends PostSchedError {}
    const store = new CountingStore(expired());
    store.get = async () => {
      throw new StoreUnavailable('Redis did not answer within 3000 ms');
    };
    const error = await caught(new TokenManager({ oauth: makeClient(), store }).getAccessToken());
    expect(error).toBeInstanceOf(StoreUnavailable);
    expect(error.message).toBe('Redis did not answer within 3000 ms');
  });
});

describe('TokenManager.setTokens and getTokens', () => {
  it('stores the tokens from the code exchange and uses them at once', async () => {
    const manager = new TokenManager({ oauth: makeClient() });
    const tokens = fresh(5);
    await manager.setTokens(tokens);
    expect(await manager.getAccessToken()).toBe(`at_${MARK}_5`);
    expect(await manager.getTokens()).toEqual(tokens);
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('rejects something that is not a TokenSet, without echoing it', async () => {
    const manager = new TokenManager({ oauth: makeClient() });
    const error = await caught(manager.setTokens({ access_token: `at_${MARK}_raw` } as never));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toContain('accessToken');
  });

  it('rejects bad options at construction', async () => {
    expect(await caught(() => new TokenManager({ oauth: makeClient(), refreshMarginMs: -1 }))).toBeInstanceOf(ValidationError);
    expect(await caught(() => new TokenManager({} as never))).toBeInstanceOf(ValidationError);
  });
});

describe('secrets', () => {
  it('shows no token in any error thrown by these tests', () => {
    expectNoSecretsInCollectedErrors(9);
  });
});

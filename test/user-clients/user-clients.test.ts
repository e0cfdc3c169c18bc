/**
 * `UserClients`, as an app uses it: connect a user, call for them, let the cache evict and forget them, dispose
 * it; what it refuses at construction; what it shows of itself. Against the fake service in-process, whose refresh
 * tokens rotate and revoke the grant when a rotated-out one comes back (so a second refresh would log a user out).
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  MemoryTokenStore,
  PostSched,
  ReauthorizationRequiredError,
  TokenManager,
  TokenStoreError,
  UserClients,
  ValidationError,
  type TokenSet,
  type TokenStore,
  type UserClientsOptions,
} from '@postsched/sdk';
import { flushIO } from '../helpers.js';
import { collectGarbage, createRig, deferred, type Rig } from './rig.js';

/** A UserClients over the rig, with stores the test can look into (one MemoryTokenStore per user, kept). */
function setUp(rig: Rig, options: Partial<UserClientsOptions> = {}) {
  const stores = new Map<string, MemoryTokenStore>();
  const storeCalls: string[] = [];
  const users = new UserClients({
    oauth: rig.refresher,
    baseUrl: rig.fake.baseUrl,
    clientOptions: { fetch: rig.fetch },
    store: (userId) => {
      storeCalls.push(userId);
      let store = stores.get(userId);
      if (store === undefined) stores.set(userId, (store = new MemoryTokenStore()));
      return store;
    },
    ...options,
  });
  return { users, stores, storeCalls };
}

/**
 * Connects alice with expired tokens, starts a call whose refresh is held at the gate, runs `action` meanwhile and
 * checks that it waits for that refresh; then lets the refresh through. Returns alice's first tokens.
 */
async function whileRefreshing(rig: Rig, users: UserClients, action: () => Promise<unknown>): Promise<TokenSet> {
  const tokens = rig.tokensFor('alice');
  await users.connect('alice', tokens);
  const gate = deferred();
  rig.gate = gate.promise;
  const call = users.client('alice').accounts.list().toArray();
  await flushIO();
  let done = false;
  const acting = action().then(() => (done = true));
  await flushIO();
  expect(done).toBe(false);
  gate.resolve();
  rig.gate = undefined;
  await Promise.all([call, acting]);
  return tokens;
}

describe('UserClients: a client per user', () => {
  it('connect() stores the tokens in the user’s store and calls onTokens; the client calls with them', async () => {
    const rig = createRig();
    const saved: Array<[string, TokenSet]> = [];
    const { users, stores } = setUp(rig, { onTokens: (userId, tokens) => void saved.push([userId, tokens]) });
    const tokens = rig.tokensFor('alice', false);
    await users.connect('alice', tokens);
    expect(await stores.get('alice')?.get()).toEqual({ ...tokens, userId: 'alice' }); // stamped with the user it is for
    expect(saved).toEqual([['alice', tokens]]);
    const client = users.client('alice');
    expect(client).toBeInstanceOf(PostSched);
    expect((await client.accounts.list().toArray()).length).toBeGreaterThan(0);
    expect(rig.refreshes.size).toBe(0); // a fresh token: no refresh
  });

  it('refreshes an expired token once for concurrent calls, saves it through the store and onTokens', async () => {
    const rig = createRig();
    const saved: Array<[string, TokenSet]> = [];
    const { users, stores } = setUp(rig, { onTokens: (userId, tokens) => void saved.push([userId, tokens]) });
    const tokens = rig.tokensFor('alice');
    await users.connect('alice', tokens);
    await Promise.all(Array.from({ length: 10 }, () => users.client('alice').accounts.list().toArray()));
    expect(rig.refreshes.get('alice')).toBe(1);
    const stored = await stores.get('alice')?.get();
    expect(stored?.refreshToken).not.toBe(tokens.refreshToken);
    expect(saved.map(([userId, t]) => [userId, t.refreshToken])).toEqual([['alice', tokens.refreshToken], ['alice', stored?.refreshToken]]);
  });

  it('client(userId) works for a user never connected in this process whose tokens are in the store', async () => {
    const rig = createRig();
    const { users, stores } = setUp(rig);
    stores.set('bob', new MemoryTokenStore(rig.tokensFor('bob'))); // stored by another process, or an earlier run
    expect((await users.client('bob').accounts.list().toArray()).length).toBeGreaterThan(0);
    expect(rig.refreshes.get('bob')).toBe(1);
  });

  it('manager(userId) is the TokenManager the user’s client uses; client() is the same object while cached', async () => {
    const rig = createRig();
    const { users } = setUp(rig);
    await users.connect('alice', rig.tokensFor('alice'));
    const manager = users.manager('alice');
    expect(manager).toBeInstanceOf(TokenManager);
    expect(manager.peekAccessToken()).toBeUndefined(); // expired
    expect(users.client('alice')).toBe(users.client('alice'));
    await users.client('alice').accounts.list().toArray(); // refreshes through that manager
    expect(manager.peekAccessToken()).toBe((await manager.getTokens())?.accessToken);
    expect(rig.refreshes.get('alice')).toBe(1);
  });

  it('without a store option, keeps each connected user’s tokens in memory across evictions and forget()', async () => {
    const rig = createRig();
    const users = new UserClients({ oauth: rig.refresher, baseUrl: rig.fake.baseUrl, clientOptions: { fetch: rig.fetch }, maxUsers: 1 });
    await users.connect('alice', rig.tokensFor('alice'));
    await users.connect('bob', rig.tokensFor('bob')); // evicts alice
    await users.forget('bob');
    expect(users.size).toBe(0);
    await users.client('alice').accounts.list().toArray();
    await users.client('bob').accounts.list().toArray();
    expect([rig.refreshes.get('alice'), rig.refreshes.get('bob')]).toEqual([1, 1]);
  });

  it('a user with no stored tokens gets ReauthorizationRequiredError (no_tokens)', async () => {
    const rig = createRig();
    const { users } = setUp(rig);
    const error = await users.client('nobody').accounts.list().toArray().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReauthorizationRequiredError);
    expect((error as ReauthorizationRequiredError).reason).toBe('no_tokens');
  });
});

describe('UserClients: the cache', () => {
  it('evicts the least recently used user past maxUsers; an evicted user is made again from the store', async () => {
    const rig = createRig();
    const { users, storeCalls } = setUp(rig, { maxUsers: 2 });
    for (const userId of ['a', 'b', 'c']) await users.connect(userId, rig.tokensFor(userId, false));
    expect(users.size).toBe(2); // a was evicted when c came
    users.client('b'); // b is now the most recent: c is the least
    await collectGarbage(); // nothing holds a's manager any more
    users.client('a'); // made again from the store; evicts c
    expect(users.size).toBe(2);
    expect(storeCalls).toEqual(['a', 'b', 'c', 'a']);
    await collectGarbage();
    users.client('b');
    expect(storeCalls).toEqual(['a', 'b', 'c', 'a']); // b stayed cached
    users.client('c');
    expect(storeCalls).toEqual(['a', 'b', 'c', 'a', 'c']);
    expect((await users.client('a').accounts.list().toArray()).length).toBeGreaterThan(0);
  });

  it('never evicts a user whose refresh is in flight; the refresh completes and is stored, and no second one starts', async () => {
    const rig = createRig();
    const { users, stores, storeCalls } = setUp(rig, { maxUsers: 1 });
    const tokens = rig.tokensFor('alice');
    await users.connect('alice', tokens);
    const gate = deferred();
    rig.gate = gate.promise;
    const first = users.client('alice').accounts.list().toArray();
    await flushIO();
    expect(rig.refreshes.get('alice')).toBe(1); // in flight, held at the gate
    await users.connect('bob', rig.tokensFor('bob', false)); // past maxUsers: bob goes, alice is refreshing
    await collectGarbage();
    const second = users.client('alice').accounts.list().toArray();
    users.client('bob');
    expect(storeCalls).toEqual(['alice', 'bob', 'bob']); // bob was the one evicted; alice's manager was kept
    gate.resolve();
    rig.gate = undefined;
    await Promise.all([first, second]);
    expect(rig.refreshes.get('alice')).toBe(1);
    expect((await stores.get('alice')?.get())?.refreshToken).not.toBe(tokens.refreshToken);
    expect(users.size).toBe(1);
  });

  it('hands the same manager out again after evicting it while it is still in use, so one user never has two', async () => {
    const rig = createRig();
    const { users, storeCalls } = setUp(rig, { maxUsers: 1 });
    await users.connect('alice', rig.tokensFor('alice'));
    const held = users.client('alice'); // e.g. a request on its way, not yet at its token call
    users.client('bob'); // evicts alice
    expect(users.manager('alice')).toBe(users.manager('alice'));
    expect(users.client('alice')).toBe(held);
    expect(storeCalls).toEqual(['alice', 'bob']);
    await Promise.all([held.accounts.list().toArray(), users.client('alice').accounts.list().toArray()]);
    expect(rig.refreshes.get('alice')).toBe(1);
  });

  it('forget() drops a user once their refresh in flight is done; the tokens stay in the store', async () => {
    const rig = createRig();
    const { users, stores } = setUp(rig);
    const tokens = await whileRefreshing(rig, users, () => users.forget('alice'));
    expect(users.size).toBe(0);
    expect((await stores.get('alice')?.get())?.refreshToken).not.toBe(tokens.refreshToken);
    await users.forget('nobody'); // not cached: nothing to do
    expect((await users.client('alice').accounts.list().toArray()).length).toBeGreaterThan(0);
    expect(rig.refreshes.get('alice')).toBe(1);
  });

  it('[Symbol.asyncDispose]() waits for refreshes in flight, then refuses new work', async () => {
    const rig = createRig();
    const { users, stores } = setUp(rig);
    const tokens = await whileRefreshing(rig, users, () => users[Symbol.asyncDispose]());
    expect((await stores.get('alice')?.get())?.refreshToken).not.toBe(tokens.refreshToken);
    expect(users.size).toBe(0);
    expect(() => users.client('alice')).toThrow(ValidationError);
    expect(() => users.manager('alice')).toThrow(/disposed/);
    await expect(users.connect('alice', tokens)).rejects.toThrow(/disposed/);
    await users[Symbol.asyncDispose](); // twice is fine
  });

  it('[Symbol.asyncDispose]() also waits for the refresh of a user the cache dropped while a request held their client', async () => {
    const rig = createRig();
    const { users, stores } = setUp(rig, { maxUsers: 1 });
    const tokens = rig.tokensFor('alice');
    await users.connect('alice', tokens);
    const held = users.client('alice'); // a request on its way, not yet at its token call
    await users.connect('bob', rig.tokensFor('bob', false)); // past maxUsers: alice is dropped
    const gate = deferred();
    rig.gate = gate.promise;
    const call = held.accounts.list().toArray();
    await flushIO();
    expect(rig.refreshes.get('alice')).toBe(1); // in flight, held at the gate
    let disposed = false;
    const disposing = users[Symbol.asyncDispose]().then(() => (disposed = true));
    await flushIO();
    expect(disposed).toBe(false); // the app would close the store's Redis next: the new refresh token must be saved first
    gate.resolve();
    rig.gate = undefined;
    await Promise.all([call, disposing]);
    expect((await stores.get('alice')?.get())?.refreshToken).not.toBe(tokens.refreshToken);
  });

  it('works with `await using`', async () => {
    const rig = createRig();
    let outside: UserClients | undefined;
    {
      await using users = new UserClients({ oauth: rig.refresher, baseUrl: rig.fake.baseUrl, clientOptions: { fetch: rig.fetch } });
      outside = users;
      await users.connect('alice', rig.tokensFor('alice', false));
    }
    expect(() => outside?.client('alice')).toThrow(/disposed/);
  });
});

describe('UserClients: a rotation onTokens failed to save', () => {
  /** A UserClients whose onTokens saves into `db` (the app's database), and fails while `failing` is set. */
  function withDatabase(rig: Rig, options: Partial<UserClientsOptions> = {}) {
    const db = new Map<string, TokenSet>();
    const state = { failing: 0 };
    const set = setUp(rig, {
      onTokens: (userId, tokens) => {
        if (state.failing > 0) {
          state.failing--;
          throw new Error('database blip');
        }
        db.set(userId, tokens);
      },
      ...options,
    });
    /** An app restarted from its database is not logged out: the refresh token saved there is still honoured. */
    const databaseHonoured = (userId: string) => rig.oauth.refresh(db.get(userId)!).then(() => true, () => false);
    return { ...set, db, state, databaseHonoured };
  }

  it('keeps the user cached past maxUsers until their next call saves it: the database gets the rotation', async () => {
    const rig = createRig();
    const { users, stores, db, state, databaseHonoured } = withDatabase(rig, { maxUsers: 1 });
    await users.connect('alice', rig.tokensFor('alice'));
    state.failing = 1;
    const failed = await users.client('alice').accounts.list().toArray().then(() => false, (e: unknown) => e instanceof TokenStoreError);
    expect(failed).toBe(true); // the refresh was stored, onTokens failed
    await users.connect('bob', rig.tokensFor('bob', false)); // past maxUsers
    await collectGarbage(); // nothing of the app holds alice's manager any more
    await users.client('alice').accounts.list().toArray();
    expect(db.get('alice')).toEqual(await stores.get('alice')?.get());
    expect(await databaseHonoured('alice')).toBe(true);
    expect(rig.refreshes.get('alice')).toBe(1);
  });

  it('holds again a dropped manager whose call (through a client a request kept) could not save its rotation', async () => {
    const rig = createRig();
    const { users, stores, db, state, storeCalls } = withDatabase(rig, { maxUsers: 1 });
    await users.connect('alice', rig.tokensFor('alice'));
    let held: PostSched | undefined = users.client('alice'); // a request on its way
    users.client('bob'); // evicts alice: her manager is only weakly held now
    state.failing = 1;
    expect(await held.accounts.list().toArray().then(() => false, () => true)).toBe(true); // refreshed, onTokens failed
    held = undefined;
    await collectGarbage(); // nothing of the app holds alice's manager any more
    await users.client('alice').accounts.list().toArray();
    expect(storeCalls).toEqual(['alice', 'bob']); // the same manager, which saved its rotation
    expect(db.get('alice')).toEqual(await stores.get('alice')?.get());
  });

  it('forget() saves it before dropping the user', async () => {
    const rig = createRig();
    const { users, stores, db, state, databaseHonoured } = withDatabase(rig);
    await users.connect('alice', rig.tokensFor('alice'));
    state.failing = 1;
    await users.client('alice').accounts.list().toArray().catch(() => {});
    await users.forget('alice');
    expect(users.size).toBe(0);
    expect(db.get('alice')).toEqual(await stores.get('alice')?.get());
    expect(await databaseHonoured('alice')).toBe(true);
  });

  it('dispose saves it; while it cannot, dispose rejects with a TokenStoreError naming the user, and tries again when called again', async () => {
    const rig = createRig();
    const { users, stores, db, state, databaseHonoured } = withDatabase(rig);
    const tokens = rig.tokensFor('alice');
    await users.connect('alice', tokens);
    await users.connect('bob', rig.tokensFor('bob'));
    state.failing = 1_000;
    await users.client('alice').accounts.list().toArray().catch(() => {});
    const error = await users[Symbol.asyncDispose]().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect((error as TokenStoreError).operation).toBe('onTokens');
    expect((error as Error).message).toContain('user "alice"');
    const stored = await stores.get('alice')?.get();
    for (const secret of [tokens.accessToken, tokens.refreshToken, stored?.accessToken, stored?.refreshToken]) {
      expect(inspect(error)).not.toContain(secret);
    }
    state.failing = 0;
    await users[Symbol.asyncDispose]();
    expect(db.get('alice')).toEqual(stored);
    expect(await databaseHonoured('alice')).toBe(true);
    expect(users.size).toBe(0);
  });
});

describe('UserClients: a store that returns another user’s tokens (a cache bug, a wrong key)', () => {
  it('refuses them as a TokenStoreError; they are never used nor written, and the user goes on with their own', async () => {
    const rig = createRig();
    const { users, stores } = setUp(rig);
    await users.connect('alice', rig.tokensFor('alice')); // expired: the next call reads the store
    await users.connect('bob', rig.tokensFor('bob', false));
    const bobs = (await stores.get('bob')?.get())!;
    const store = stores.get('alice')!;
    const { get, set } = { get: store.get.bind(store), set: store.set.bind(store) };
    const written: TokenSet[] = [];
    let mixUps = 1;
    store.get = async () => (mixUps-- > 0 ? bobs : get());
    store.set = async (tokens, options) => (written.push(tokens), set(tokens, options));
    rig.sent = [];

    const error = await users.client('alice').accounts.list().toArray().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect((error as TokenStoreError).operation).toBe('get');
    expect((error as Error).message).toContain('another user');
    // Alice's calls go on with alice's tokens: refreshed from hers, again after a 401.
    await users.client('alice').accounts.list().toArray();
    const manager = users.manager('alice');
    await manager.forceRefresh((await manager.getAccessToken()));
    expect(rig.refreshes.get('alice')).toBe(2);
    expect(rig.reused).toBe(0);
    const mine = (await manager.getTokens())!;
    expect(mine.userId).toBe('alice');
    expect(mine.refreshToken).not.toBe(bobs.refreshToken);
    expect(written.filter((t) => t.accessToken === bobs.accessToken || t.refreshToken === bobs.refreshToken)).toEqual([]);
    expect(rig.sent.filter((request) => request.includes(bobs.accessToken) || request.includes(bobs.refreshToken!))).toEqual([]);
    expect(rig.sent.length).toBeGreaterThan(0);
    expect(rig.sent.filter((request) => request.includes('alice'))).toEqual([]); // the stamp is never sent
  });

  it('accepts a TokenSet stored before the stamp existed (no userId)', async () => {
    const rig = createRig();
    const { users, stores } = setUp(rig);
    stores.set('alice', new MemoryTokenStore(rig.tokensFor('alice')));
    await users.client('alice').accounts.list().toArray();
    expect((await stores.get('alice')?.get())?.userId).toBe('alice'); // stamped from its first write
  });

  it('connect() refuses tokens stamped for another user (ValidationError), writing nothing', async () => {
    const rig = createRig();
    const { users, stores } = setUp(rig);
    await users.connect('bob', rig.tokensFor('bob', false));
    const bobs = (await stores.get('bob')?.get())!;
    await expect(users.connect('alice', bobs)).rejects.toThrow(ValidationError);
    expect(await stores.get('alice')?.get()).toBeUndefined();
  });
});

describe('UserClients: onReauthorizationRequired', () => {
  it.each([
    ['MemoryTokenStore', false],
    // No mark of a dead grant to read back (getGrant, markReauthorizationRequired): this process tells it.
    ['a store of get and set only', true],
  ])('is called once per user for many failing calls, and each caller still gets the error (%s)', async (_, plain) => {
    const rig = createRig();
    const calls: Array<[string, string]> = [];
    const kept = new Map<string, MemoryTokenStore>();
    const plainStore = (userId: string): TokenStore => {
      const memory = kept.get(userId) ?? new MemoryTokenStore();
      kept.set(userId, memory);
      return { get: () => memory.get(), set: (tokens, options) => memory.set(tokens, options) };
    };
    const { users } = setUp(rig, { ...(plain ? { store: plainStore } : {}), onReauthorizationRequired: (userId, error) => void calls.push([userId, error.reason]) });
    // A refresh token the service never issued (or revoked): every refresh of it is refused with invalid_grant.
    // (A copy whose refresh token this process saw rotated out would not do: the manager takes the newer tokens.)
    await users.connect('alice', { ...rig.tokensFor('alice'), refreshToken: 'rt_the_service_does_not_know' });
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => users.client('alice').accounts.list().toArray()));
    expect(results.every((r) => r.status === 'rejected' && r.reason instanceof ReauthorizationRequiredError)).toBe(true);
    await users.client('alice').accounts.list().toArray().catch(() => {});
    expect(calls).toEqual([['alice', 'invalid_grant']]);
    // A user who never connected gets no_tokens from the call, never the callback (an app e-mailing on it would
    // e-mail strangers).
    const nobody = await users.client('nobody').accounts.list().toArray().catch((e: unknown) => e);
    expect(nobody).toMatchObject({ reason: 'no_tokens' });
    expect(calls).toEqual([['alice', 'invalid_grant']]);
  });

  it('is called again after the user connects again, and after it failed', async () => {
    const rig = createRig();
    let failNext = true;
    const calls: string[] = [];
    const { users } = setUp(rig, {
      onReauthorizationRequired: async (userId) => {
        calls.push(userId);
        if (failNext) {
          failNext = false;
          throw new Error('database down');
        }
      },
    });
    const fail = () => users.client('alice').accounts.list().toArray().catch((e: unknown) => e);
    // A grant that existed and died: a refresh token the service does not know.
    await users.connect('alice', { ...rig.tokensFor('alice'), refreshToken: 'rt_revoked' });
    expect(await fail()).toBeInstanceOf(ReauthorizationRequiredError);
    await flushIO();
    expect(await fail()).toBeInstanceOf(ReauthorizationRequiredError); // the callback failed: called again
    await fail();
    expect(calls).toEqual(['alice', 'alice']);
    await users.connect('alice', rig.tokensFor('alice', false));
    await users.manager('alice').setTokens({ ...rig.tokensFor('x'), refreshToken: 'rt_unknown' });
    await fail();
    expect(calls).toEqual(['alice', 'alice', 'alice']);
  });
});

describe('UserClients: what it refuses', () => {
  const rig = createRig();
  const valid: UserClientsOptions = { oauth: rig.oauth, baseUrl: 'https://api.postsched.test' };
  const refused = (options: unknown): ValidationError => {
    try {
      new UserClients(options as UserClientsOptions);
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      return error as ValidationError;
    }
    throw new Error('accepted');
  };

  it.each([
    ['no options', undefined, []],
    ['no oauth', { baseUrl: valid.baseUrl }, ['oauth']],
    ['a plain-http base URL', { ...valid, baseUrl: 'http://api.example.com' }, ['baseUrl']],
    ['a store that is not a function', { ...valid, store: new MemoryTokenStore() }, ['store']],
    ['an onTokens that is not a function', { ...valid, onTokens: 'save' }, ['onTokens']],
    ['an onReauthorizationRequired that is not a function', { ...valid, onReauthorizationRequired: {} }, ['onReauthorizationRequired']],
    ['maxUsers 0', { ...valid, maxUsers: 0 }, ['maxUsers']],
    ['maxUsers 1.5', { ...valid, maxUsers: 1.5 }, ['maxUsers']],
    ['maxUsers as a string', { ...valid, maxUsers: '100' }, ['maxUsers']],
    ['clientOptions that are not an object', { ...valid, clientOptions: 'fast' }, ['clientOptions']],
    ['clientOptions.auth', { ...valid, clientOptions: { auth: 'token' } }, ['clientOptions', 'auth']],
    ['clientOptions.baseUrl', { ...valid, clientOptions: { baseUrl: 'https://elsewhere.example' } }, ['clientOptions', 'baseUrl']],
    ['a bad clientOptions.timeoutMs', { ...valid, clientOptions: { timeoutMs: -1 } }, ['timeoutMs']],
    ['a header with a line break', { ...valid, clientOptions: { headers: { 'x-a': 'a\r\nb' } } }, ['headers']],
    ['a bad managerOptions.refreshMarginMs', { ...valid, managerOptions: { refreshMarginMs: -5 } }, ['refreshMarginMs']],
  ])('%s', (_name, options, path) => {
    expect(refused(options).path).toEqual(path);
  });

  it('a user id that is not a non-empty string', async () => {
    const users = new UserClients(valid);
    for (const userId of ['', 42, undefined, null]) {
      expect(() => users.client(userId as string)).toThrow(ValidationError);
      expect(() => users.manager(userId as string)).toThrow(/userId/);
      await expect(users.connect(userId as string, rig.tokensFor('x'))).rejects.toThrow(ValidationError);
      await expect(users.forget(userId as string)).rejects.toThrow(ValidationError);
    }
    await expect(users.connect('alice', { accessToken: 'x' } as TokenSet)).rejects.toThrow(ValidationError);
  });

  it('tokens given as a Promise (the `await` before exchangeCode() forgotten), saying to await it', async () => {
    const users = new UserClients(valid);
    const pending = Promise.resolve(rig.tokensFor('alice'));
    await expect(users.connect('alice', pending as unknown as TokenSet)).rejects.toThrow(ValidationError);
    await expect(users.connect('alice', pending as unknown as TokenSet)).rejects.toThrow('`tokens` got a Promise: await exchangeCode() first');
  });

  it('a store factory that returns no store', () => {
    const users = new UserClients({ ...valid, store: () => ({}) as TokenStore });
    expect(() => users.client('alice')).toThrow(/store/);
  });

  it('a store factory that forgets `return` (not a MemoryTokenStore in its place)', async () => {
    const users = new UserClients({
      ...valid,
      store: ((userId: string) => {
        void new MemoryTokenStore(rig.tokensFor(userId)); // `return` forgotten
      }) as unknown as (userId: string) => TokenStore,
    });
    const error = (() => {
      try {
        users.client('alice');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(['store']);
    expect((error as Error).message).toMatch(/returned undefined.*`return`/);
    await expect(users.connect('bob', rig.tokensFor('bob'))).rejects.toThrow(ValidationError);
    expect(users.size).toBe(0);
  });
});

describe('UserClients: secrets', () => {
  it('shows no token in util.inspect or JSON output, and wraps a failing onTokens without its secrets', async () => {
    const rig = createRig();
    const tokens = rig.tokensFor('alice');
    const { users } = setUp(rig, {
      onTokens: () => {
        throw new Error(`cannot save ${tokens.refreshToken} / ${tokens.accessToken}`);
      },
    });
    const error = await users.connect('alice', tokens).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect((error as TokenStoreError).operation).toBe('onTokens');
    const shown = [inspect(users), JSON.stringify(users), inspect(users.client('alice')), inspect(users.manager('alice')), String(error), inspect(error)];
    for (const text of shown) {
      expect(text).not.toContain(tokens.accessToken);
      expect(text).not.toContain(tokens.refreshToken);
    }
    expect(inspect(users)).toBe('UserClients { cachedUsers: 1, maxUsers: 10000 }');
    expect(JSON.parse(JSON.stringify(users))).toEqual({ cachedUsers: 1, maxUsers: 10_000 });
  });
});

describe('UserClients: a store factory that throws', () => {
  it('passes the error to the caller and caches nothing', () => {
    const users = new UserClients({ oauth: createRig().oauth, baseUrl: 'https://api.postsched.test', store: () => {
      throw new Error('no redis');
    } });
    expect(() => users.client('alice')).toThrow('no redis');
    expect(users.size).toBe(0);
  });
});

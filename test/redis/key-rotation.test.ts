/**
 * Issue 29, part 2: rotating the key that encrypts stored tokens. `encryptionKey` takes a keyring; values name their
 * key; a value written with one key (today's format) stays readable under a keyring listing that key; writes use
 * `current`; `rotateTokenEncryption` counts and rewrites the rest by compare-and-set. Then the whole rotation under
 * traffic: three app instances deployed one after the other with each step's keyring while their users refresh.
 * Counted, never timed: users logged out, calls failed, values left under the old key.
 */
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OAuthClient, ReauthorizationRequiredError, type TokenSet, UserClients, ValidationError } from '@postsched/sdk';
import { type EncryptionKey, RedisTokenStore, rotateTokenEncryption, StoredTokensUnreadableError } from '@postsched/sdk/redis';
import { createFakeService } from '@postsched/sdk/testing';
import { type RedisServer, startRedisServer } from './redis-server.js';

const K1 = 'KHt0b2tlbi1rZXktb25lLWZvci1maXh0dXJlcy0xMjM='; // base64 of 32 bytes
const K2 = Buffer.alloc(32, 2);
const K3 = Buffer.alloc(32, 3).toString('base64url');

/** A value written by RedisTokenStore({ encryptionKey: K1 }) before keyrings (main at 54f46de), under FIXTURE_KEY. */
const FIXTURE_KEY = 'postsched:tokens:fixture';
const FIXTURE =
  'enc:v1:Q7wahoAYlDUHzi2q:6DrZDJfkt8DD8A_8P-xskjNJSY4kvRFaoJjLIAC3FOfASHcYQh8vOmZVSEbcrbacHoOJLuEjVghBWjGE7Rrhg2akFVin5ijOTJ9Cho1RZYhGf428cg6xrlK-KAu3Y4ZyudFsutTKJbzxqmKjuyR09wi0NeQTz91SXZ-S37Rjvcr5rhXH9mGJCsL-6Xg_cSs';
const FIXTURE_TOKENS: TokenSet = { accessToken: 'at_fixture', refreshToken: 'rt_fixture', expiresAt: 1_900_000_000_000, scopes: ['posts:read'], tokenType: 'bearer' };

function tokens(label: string): TokenSet {
  return { accessToken: `at-${label}`, refreshToken: `rt-${label}`, expiresAt: 1_900_000_000_000, scopes: ['posts:read'], tokenType: 'bearer' };
}

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
beforeEach(async () => {
  await redis.flushall();
});

const store = (key: string, encryptionKey: EncryptionKey) => new RedisTokenStore({ redis, key, encryptionKey });

describe('encryptionKey as a keyring', () => {
  it("reads a value today's code wrote with one key, and writes it back under `current` on the user's next write", async () => {
    await redis.set(FIXTURE_KEY, FIXTURE);
    const keyring = store(FIXTURE_KEY, { current: 'k2', keys: { k1: K1, k2: K2 } });
    expect(await keyring.get()).toEqual(FIXTURE_TOKENS);
    expect(await store(FIXTURE_KEY, K1).get()).toEqual(FIXTURE_TOKENS); // one key, as before: unchanged

    await keyring.set(tokens('next'), { expectedRefreshToken: 'rt_fixture' });
    expect(await redis.get(FIXTURE_KEY)).toMatch(/^enc:v2:k2:/);
    expect(await store(FIXTURE_KEY, { current: 'k2', keys: { k2: K2 } }).get()).toEqual(tokens('next'));
  });

  it('writes one key as before (v1), a keyring with its current key named; reads with any listed key', async () => {
    await store('u1', K1).set(tokens('1'));
    expect(await redis.get('u1')).toMatch(/^enc:v1:[^:]+:[^:]+$/);
    await store('u2', { current: 'k1', keys: { k1: K1, k2: K2 } }).set(tokens('2'));
    expect(await redis.get('u2')).toMatch(/^enc:v2:k1:/);

    const both = { current: 'k2', keys: { k1: K1, k2: K2 } };
    expect(await store('u1', both).get()).toEqual(tokens('1'));
    expect(await store('u2', both).get()).toEqual(tokens('2'));
    expect(await store('u2', K1).get()).toEqual(tokens('2')); // one key again (a rollback): the same key material reads it
  });

  it('refuses a value under a key the keyring does not list (StoredTokensUnreadableError naming the key id, never a key)', async () => {
    await store('u', { current: 'k1', keys: { k1: K1 } }).set(tokens('1'));
    const error = await store('u', { current: 'k3', keys: { k3: K3 } }).get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoredTokensUnreadableError);
    expect(error).toMatchObject({ problem: 'wrong_key_or_tampered' });
    expect((error as Error).message).toContain('key id "k1"');
    for (const key of [K1, K3]) expect((error as Error).message).not.toContain(key);
  });

  const bad: Array<[string, unknown, string, Array<string>]> = [
    ['`current` not among `keys`', { current: 'k9', keys: { k1: K1, k2: K2 } }, 'must be the id of one of `encryptionKey.keys` (k1, k2)', ['encryptionKey', 'current']],
    ['no `current`', { keys: { k1: K1 } }, '`encryptionKey.current` must be the id', ['encryptionKey', 'current']],
    ['no keys', { current: 'k1', keys: {} }, 'lists no `keys`', ['encryptionKey', 'keys']],
    ['a key of 31 bytes', { current: 'k1', keys: { k1: Buffer.alloc(31, 1) } }, '`encryptionKey.keys.k1` must be 32 bytes', ['encryptionKey', 'keys', 'k1']],
    ['a key that is not base64', { current: 'k1', keys: { k1: 'not base64 at all!' } }, 'not base64', ['encryptionKey', 'keys', 'k1']],
    ['an empty key id', { current: '', keys: { '': K1 } }, 'key id of 0 characters', ['encryptionKey', 'keys']],
    ['a misspelt field', { current: 'k1', keys: { k1: K1 }, curent: 'k2' }, '`curent` is not an option of a keyring (`encryptionKey`) (it takes current, keys). Did you mean `current`?', ['curent']],
    // A key pasted where its id goes: refused without echoing it.
    ['a key as its own id', { current: K3, keys: { [K3]: K3 } }, 'key id of 43 characters', ['encryptionKey', 'keys']],
  ];
  it.each(bad)('refuses a keyring with %s: a ValidationError saying so, never showing a key', (_, encryptionKey, says, path) => {
    const error = (() => {
      try {
        store('u', encryptionKey as EncryptionKey);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain(says);
    expect((error as ValidationError).path).toEqual(path);
    for (const key of [K1, K3, K2.toString('base64')]) expect((error as Error).message).not.toContain(key);
  });

  it('shows no key in inspect or JSON output', () => {
    const s = store('u', { current: 'k2', keys: { k1: K1, k2: K2 } });
    for (const shown of [inspect(s, { showHidden: true, depth: 10 }), JSON.stringify(s)]) {
      for (const key of [K1, K2.toString('base64'), K2.toString('base64url')]) expect(shown).not.toContain(key);
    }
  });
});

describe('rotateTokenEncryption (Redis)', () => {
  const keyring = { current: 'k2', keys: { k1: K1, k2: K2 } };

  it('counts the values under older keys with dryRun, rewrites them, and leaves locks, clear text and unreadable values alone', async () => {
    await store('t:a', K1).set(tokens('a')); // today's format
    await store('t:b', { current: 'k1', keys: { k1: K1 } }).set(tokens('b'));
    await store('t:c', keyring).set(tokens('c')); // already under k2
    await store('t:d', K3).set(tokens('d')); // a key the keyring does not list
    await redis.set('t:a:lock', 'f'.repeat(32));
    await redis.set('t:clear', JSON.stringify(tokens('e')));
    await redis.set('other:x', (await redis.get('t:a'))!);

    expect(await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: keyring, dryRun: true })).toEqual({ scanned: 4, rewritten: 0, underOldKeys: 2, unreadable: 1 });
    expect(await redis.get('t:a')).toMatch(/^enc:v1:/); // dryRun wrote nothing
    expect(await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: keyring })).toEqual({ scanned: 4, rewritten: 2, underOldKeys: 0, unreadable: 1 });
    expect(await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: keyring, dryRun: true })).toEqual({ scanned: 4, rewritten: 0, underOldKeys: 0, unreadable: 1 });

    const k2Only = { current: 'k2', keys: { k2: K2 } };
    for (const label of ['a', 'b', 'c']) expect(await store(`t:${label}`, k2Only).get()).toEqual(tokens(label));
    expect(await redis.get('t:a:lock')).toBe('f'.repeat(32));
    expect(await redis.get('t:clear')).toBe(JSON.stringify(tokens('e')));
    expect(await redis.get('other:x')).toMatch(/^enc:v1:/); // outside the pattern
  });

  it('works the same through a node-redis client', async () => {
    await store('t:a', K1).set(tokens('a'));
    await store('t:b', keyring).set(tokens('b'));
    const nodeRedis = await createClient({ url: server.url }).on('error', () => {}).connect();
    try {
      expect(await rotateTokenEncryption({ redis: nodeRedis, match: 't:*', encryptionKey: keyring })).toEqual({ scanned: 2, rewritten: 1, underOldKeys: 0, unreadable: 0 });
    } finally {
      nodeRedis.destroy();
    }
    expect(await store('t:a', { current: 'k2', keys: { k2: K2 } }).get()).toEqual(tokens('a'));
  });

  it('never overwrites a value a refresh wrote between its read and its write (compare-and-set)', async () => {
    await store('t:a', K1).set(tokens('old'));
    // The rotation's client: right before its write, a refresh (under the old keyring, the worst case) stores newer tokens.
    let raced = false;
    const racing = {
      call: async (command: string, ...args: string[]) => {
        if (!raced && (command === 'EVALSHA' || command === 'EVAL')) {
          raced = true;
          await store('t:a', K1).set(tokens('new'), { expectedRefreshToken: 'rt-old' });
        }
        return redis.call(command, ...args);
      },
    };
    const counts = await rotateTokenEncryption({ redis: racing, match: 't:*', encryptionKey: keyring });
    expect(raced).toBe(true);
    expect(await store('t:a', keyring).get()).toEqual(tokens('new'));
    expect(counts).toEqual({ scanned: 1, rewritten: 1, underOldKeys: 0, unreadable: 0 }); // looked again and rewrote the new value
    expect(await redis.get('t:a')).toMatch(/^enc:v2:k2:/);
  });

  it('refuses wrong options with a ValidationError through the one option check', async () => {
    await expect(rotateTokenEncryption({ redis, match: '', encryptionKey: keyring })).rejects.toThrow(/`match` must be the SCAN pattern/);
    await expect(rotateTokenEncryption({ redis, match: 't:*' } as never)).rejects.toThrow(/`encryptionKey` must be the stores' keyring/);
    await expect(rotateTokenEncryption({ redis, match: 't:*', encryptionKey: keyring, dry: true } as never)).rejects.toThrow(/`dry` is not an option/);
    await expect(rotateTokenEncryption({ redis: { call: redis.call.bind(redis), isCluster: true } as never, match: 't:*', encryptionKey: keyring })).rejects.toThrow(
      /once per master/,
    );
    await expect(rotateTokenEncryption({ redis, match: 't:*', encryptionKey: { current: 'k2', keys: { k1: K1 } } })).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('a rotation k1 → k2 under traffic: three app instances, deployed one after the other at each step', () => {
  const APP = { clientId: 'app_rotation', clientSecret: 'secret_rotation_1234', redirectUris: ['http://127.0.0.1/callback'] };
  const USERS = 30;
  /** Users 0–14 call all along; 15–29 are idle: nothing writes them before rotateTokenEncryption. */
  const ACTIVE = 15;
  const keyOf = (userId: string) => `postsched:rot:{${userId}}`;

  it('logs out nobody, and leaves no value under k1 once k1 is removed', { timeout: 120_000 }, async () => {
    const fake = createFakeService({ apps: [APP], refreshTokenReuse: 'revoke-grant' });
    const baseUrl = (await fake.listen()).url;
    const oauth = new OAuthClient({ baseUrl, clientId: APP.clientId, clientSecret: APP.clientSecret, redirectUri: APP.redirectUris[0]! });
    const userIds = Array.from({ length: USERS }, (_, i) => `user_${i}`);
    for (const id of userIds) await store(keyOf(id), K1).set(fake.issueTokenSet({ clientId: APP.clientId })); // stored by today's code

    /** An app instance: a process of its own (its own OAuthClient, so its own memory of rotations, and connection). */
    interface Instance {
      readonly users: UserClients;
      readonly redis: Redis;
      inFlight: number;
    }
    const connections: Redis[] = [];
    const deploy = (encryptionKey: EncryptionKey): Instance => {
      const own = new Redis(server.url);
      connections.push(own);
      const ownOauth = new OAuthClient({ baseUrl, clientId: APP.clientId, clientSecret: APP.clientSecret, redirectUri: APP.redirectUris[0]! });
      const store = (id: string) => new RedisTokenStore({ redis: own, key: keyOf(id), encryptionKey });
      return { users: new UserClients({ oauth: ownOauth, baseUrl, store }), redis: own, inFlight: 0 };
    };
    /** Stops an instance as a deploy does: it finishes its requests, then exits (nothing of it writes any more). */
    const retire = async (instance: Instance) => {
      while (instance.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      instance.redis.disconnect();
    };
    const instances = [deploy(K1), deploy(K1), deploy(K1)];
    const failures: Record<string, number> = {};
    let calls = 0;
    let stopped = false;
    // Each lane: a request for a user, getting their token and refreshing it as after a 401 (one instance refreshes, the
    // others read its result).
    const lane = async (i: number) => {
      while (!stopped) {
        const instance = instances[i]!;
        instance.inFlight++;
        const manager = instance.users.manager(userIds[Math.floor(Math.random() * ACTIVE)]!);
        try {
          await manager.forceRefresh(await manager.getAccessToken());
          calls++;
        } catch (error) {
          const name = error instanceof ReauthorizationRequiredError ? `${error.name}:${error.reason}` : (error as Error).name;
          failures[name] = (failures[name] ?? 0) + 1;
        } finally {
          instance.inFlight--;
        }
      }
    };
    const refreshes = () => fake.stats.tokenRequests.refresh_token;
    const moreRefreshes = async (count: number) => {
      const until = refreshes() + count;
      while (refreshes() < until) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    /** A rolling deploy: one instance after the other gets `encryptionKey`, traffic going on. */
    const rollOut = async (encryptionKey: EncryptionKey) => {
      for (const [i, old] of instances.entries()) {
        instances[i] = deploy(encryptionKey);
        await retire(old);
        await moreRefreshes(10);
      }
    };
    const traffic = instances.flatMap((_, i) => [lane(i), lane(i)]);

    try {
      await moreRefreshes(10);
      await rollOut({ current: 'k1', keys: { k1: K1, k2: K2 } }); // 1. every instance can read k2
      await rollOut({ current: 'k2', keys: { k1: K1, k2: K2 } }); // 2. every instance writes k2
      const rotated = await rotateTokenEncryption({ redis, match: 'postsched:rot:*', encryptionKey: { current: 'k2', keys: { k1: K1, k2: K2 } } }); // 3.
      await moreRefreshes(10);
      await rollOut({ current: 'k2', keys: { k2: K2 } }); // 4. k1 removed
      stopped = true;
      await Promise.all(traffic);

      const left = await rotateTokenEncryption({ redis, match: 'postsched:rot:*', encryptionKey: { current: 'k2', keys: { k2: K2 } }, dryRun: true });
      let loggedOut = 0;
      for (const id of userIds) {
        const stored = await store(keyOf(id), { current: 'k2', keys: { k2: K2 } }).get();
        // A refresh with what the store holds: refused (reused, or its grant revoked) means the user must sign in again.
        if (stored === undefined || (await oauth.refresh(stored).then(() => false, (e: unknown) => e instanceof ReauthorizationRequiredError))) loggedOut++;
      }
      console.log('Rotation k1 → k2 under traffic:', JSON.stringify({ calls, failures, rotated, left, loggedOut }));
      expect(rotated.underOldKeys).toBe(0);
      expect(rotated.rewritten).toBeGreaterThanOrEqual(USERS - ACTIVE); // the idle users, at least
      expect(left).toEqual({ scanned: USERS, rewritten: 0, underOldKeys: 0, unreadable: 0 });
      expect(failures).toEqual({});
      expect(loggedOut).toBe(0);
      expect(calls).toBeGreaterThan(0);
    } finally {
      stopped = true;
      await Promise.allSettled(traffic);
      for (const c of connections) c.disconnect();
      await fake.close();
    }
  });
});

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
import { type EncryptionKey, RedisTokenStore, rotateTokenEncryption, SharedTokenStoreError } from '@postsched/sdk/redis';
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

const store = (key: string, encryptionKey: EncryptionKey | 'none') => new RedisTokenStore({ redis, key, encryptionKey });

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

  it('refuses a value under a key the keyring does not list (unreadable, naming the key id, never a key)', async () => {
    await store('u', { current: 'k1', keys: { k1: K1 } }).set(tokens('1'));
    const error = await store('u', { current: 'k3', keys: { k3: K3 } }).get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SharedTokenStoreError);
    expect(error).toMatchObject({ code: 'unreadable', problem: 'wrong_key_or_tampered' });
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
    ['a misspelt field', { current: 'k1', keys: { k1: K1 }, curent: 'k2' }, '`curent` is not an option of a keyring (`encryptionKey`) (it takes current, keys, allowPlaintext). Did you mean `current`?', ['curent']],
    ['`allowPlaintext` not a boolean', { current: 'k1', keys: { k1: K1 }, allowPlaintext: 'yes' }, '`encryptionKey.allowPlaintext` must be true', ['encryptionKey', 'allowPlaintext']],
    ["`current: 'none'` without `allowPlaintext`", { current: 'none', keys: { k1: K1 } }, "is 'none' (values written in clear) in a keyring without `allowPlaintext: true`", ['encryptionKey', 'current']],
    ['a key named "none"', { current: 'none', keys: { none: K1 }, allowPlaintext: true }, 'holds a key named "none"', ['encryptionKey', 'keys']],
    ['a Float32Array key', { current: 'k1', keys: { k1: new Float32Array(8) } }, '`encryptionKey.keys.k1` must be a Uint8Array (or Buffer) of 32 bytes or its base64 text; got a Float32Array', ['encryptionKey', 'keys', 'k1']],
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

describe("moving from encryptionKey: 'none' to a key", () => {
  const step1 = { current: 'none', keys: { k1: K1 }, allowPlaintext: true };
  const step2 = { current: 'k1', keys: { k1: K1 }, allowPlaintext: true };
  const done = { current: 'k1', keys: { k1: K1 } };

  it('reads values in clear only while the keyring says allowPlaintext; writes in clear at step 1, under k1 from step 2', async () => {
    await store('u', 'none').set(tokens('0'));
    const refused = await store('u', done).get().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SharedTokenStoreError);
    expect(refused).toMatchObject({ code: 'unreadable', problem: 'not_encrypted' });
    expect(await store('u', step1).get()).toEqual(tokens('0'));
    await store('u', step1).set(tokens('1'), { expectedRefreshToken: 'rt-0' });
    expect(await redis.get('u')).toBe(JSON.stringify(tokens('1'))); // in clear: a process still at 'none' reads it
    expect(await store('u', 'none').get()).toEqual(tokens('1'));
    expect(await store('u', step2).get()).toEqual(tokens('1'));
    await store('u', step2).set(tokens('2'), { expectedRefreshToken: 'rt-1' });
    expect(await redis.get('u')).toMatch(/^enc:v2:k1:/);
    expect(await store('u', step1).get()).toEqual(tokens('2')); // a process still at step 1 reads it
    expect(await store('u', done).get()).toEqual(tokens('2'));
  });

  it('rotateTokenEncryption encrypts the values in clear under `current` while the keyring allows them; then none is left', async () => {
    await store('t:a', 'none').set(tokens('a'));
    await store('t:b', 'none').set(tokens('b'));
    await store('t:c', step2).set(tokens('c'));
    await redis.set('t:a:lock', 'f'.repeat(32)); // a lock's value: not tokens, left alone
    expect(await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: step2, dryRun: true })).toEqual({ scanned: 3, rewritten: 0, underOldKeys: 2, unreadable: 0, plaintext: 2 });
    expect(await redis.get('t:a')).toBe(JSON.stringify(tokens('a')));
    expect(await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: step2 })).toEqual({ scanned: 3, rewritten: 2, underOldKeys: 0, unreadable: 0, plaintext: 2 });
    expect(await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: done, dryRun: true })).toEqual({ scanned: 3, rewritten: 0, underOldKeys: 0, unreadable: 0, plaintext: 0 });
    for (const label of ['a', 'b', 'c']) expect(await store(`t:${label}`, done).get()).toEqual(tokens(label));
    expect(await redis.get('t:a:lock')).toBe('f'.repeat(32));
  });
});

describe('rotateTokenEncryption (Redis)', () => {
  const keyring = { current: 'k2', keys: { k1: K1, k2: K2 } };

  it('counts the values under older keys with dryRun, rewrites them, and leaves locks and other keys alone', async () => {
    await store('t:a', K1).set(tokens('a')); // today's format
    await store('t:b', { current: 'k1', keys: { k1: K1 } }).set(tokens('b'));
    await store('t:c', keyring).set(tokens('c')); // already under k2
    await redis.set('t:a:lock', 'f'.repeat(32));
    await redis.set('other:x', (await redis.get('t:a'))!);

    expect(await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: keyring, dryRun: true })).toEqual({ scanned: 3, rewritten: 0, underOldKeys: 2, unreadable: 0, plaintext: 0 });
    expect(await redis.get('t:a')).toMatch(/^enc:v1:/); // dryRun wrote nothing
    expect(await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: keyring })).toEqual({ scanned: 3, rewritten: 2, underOldKeys: 0, unreadable: 0, plaintext: 0 });
    expect(await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: keyring, dryRun: true })).toEqual({ scanned: 3, rewritten: 0, underOldKeys: 0, unreadable: 0, plaintext: 0 });

    const k2Only = { current: 'k2', keys: { k2: K2 } };
    for (const label of ['a', 'b', 'c']) expect(await store(`t:${label}`, k2Only).get()).toEqual(tokens(label));
    expect(await redis.get('t:a:lock')).toBe('f'.repeat(32));
    expect(await redis.get('other:x')).toMatch(/^enc:v1:/); // outside the pattern
  });

  it('fails a dry run that finds values no key of the keyring opens, naming the count, and never says a key can go', async () => {
    await store('t:a', K1).set(tokens('a'));
    await store('t:d', K3).set(tokens('d')); // a key the keyring does not list
    await redis.set('t:clear', JSON.stringify(tokens('e'))); // in clear, and the keyring does not allow it
    const error = await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: keyring, dryRun: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(['encryptionKey']);
    expect((error as Error).message).toMatch(/^`encryptionKey` is missing a key: 2 of 3 stored values cannot be read with this keyring/);
    expect((error as Error).message).toContain('in clear while the keyring does not say `allowPlaintext: true`');
    expect((error as Error).message).not.toMatch(/can be removed/);
    // A run rewrites what it can, and counts the rest, left as they are.
    expect(await rotateTokenEncryption({ redis, match: 't:*', encryptionKey: keyring })).toEqual({ scanned: 3, rewritten: 1, underOldKeys: 0, unreadable: 2, plaintext: 1 });
    expect(await store('t:d', K3).get()).toEqual(tokens('d'));
    expect(await redis.get('t:clear')).toBe(JSON.stringify(tokens('e')));
  });

  it('fails the dry run of the final keyring (k2 alone) while values are still under k1: they are unreadable, not "none left"', async () => {
    for (const user of ['a', 'b', 'c']) await store(`t:${user}`, K1).set(tokens(user));
    await expect(rotateTokenEncryption({ redis, match: 't:*', encryptionKey: { current: 'k2', keys: { k2: K2 } }, dryRun: true })).rejects.toThrow(
      /^`encryptionKey` is missing a key: 3 of 3 stored values cannot be read/,
    );
  });

  it('works the same through a node-redis client', async () => {
    await store('t:a', K1).set(tokens('a'));
    await store('t:b', keyring).set(tokens('b'));
    const nodeRedis = await createClient({ url: server.url }).on('error', () => {}).connect();
    try {
      expect(await rotateTokenEncryption({ redis: nodeRedis, match: 't:*', encryptionKey: keyring })).toEqual({ scanned: 2, rewritten: 1, underOldKeys: 0, unreadable: 0, plaintext: 0 });
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
    expect(counts).toEqual({ scanned: 1, rewritten: 1, underOldKeys: 0, unreadable: 0, plaintext: 0 }); // looked again and rewrote the new value
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
    await expect(rotateTokenEncryption({ redis, match: 't:*', encryptionKey: 'none' })).rejects.toThrow(/`encryptionKey` must be the stores' keyring/);
    await expect(rotateTokenEncryption({ redis, match: 't:*', encryptionKey: { current: 'none', keys: { k1: K1 }, allowPlaintext: true } })).rejects.toThrow(
      /`encryptionKey.current` is 'none': a rotation encrypts under `current`/,
    );
  });
});

describe("a move 'none' → k1 → k2 under traffic: three app instances, deployed one after the other at each step", () => {
  const APP = { clientId: 'app_rotation', clientSecret: 'secret_rotation_1234', redirectUris: ['http://127.0.0.1/callback'] };
  const USERS = 30;
  /** Users 0–14 call all along; 15–29 are idle: nothing writes them before rotateTokenEncryption. */
  const ACTIVE = 15;
  const keyOf = (userId: string) => `postsched:rot:{${userId}}`;

  it('logs out nobody, and leaves no value in clear nor under k1 once each is removed', { timeout: 180_000 }, async () => {
    const fake = createFakeService({ apps: [APP], refreshTokenReuse: 'revoke-grant' });
    const baseUrl = (await fake.listen()).url;
    const oauth = new OAuthClient({ baseUrl, clientId: APP.clientId, clientSecret: APP.clientSecret, redirectUri: APP.redirectUris[0]! });
    const userIds = Array.from({ length: USERS }, (_, i) => `user_${i}`);
    for (const id of userIds) await store(keyOf(id), 'none').set(fake.issueTokenSet({ clientId: APP.clientId })); // stored in clear

    /** An app instance: a process of its own (its own OAuthClient, so its own memory of rotations, and connection). */
    interface Instance {
      readonly users: UserClients;
      readonly redis: Redis;
      inFlight: number;
    }
    const connections: Redis[] = [];
    const deploy = (encryptionKey: EncryptionKey | 'none'): Instance => {
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
    const instances = [deploy('none'), deploy('none'), deploy('none')];
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
    const match = 'postsched:rot:*';

    try {
      await moreRefreshes(10);
      // From clear to k1: every instance reads k1 (still writing in clear), then writes k1; the rest is encrypted by
      // the rotation; then values in clear are refused.
      await rollOut({ current: 'none', keys: { k1: K1 }, allowPlaintext: true });
      await rollOut({ current: 'k1', keys: { k1: K1 }, allowPlaintext: true });
      const encrypted = await rotateTokenEncryption({ redis, match, encryptionKey: { current: 'k1', keys: { k1: K1 }, allowPlaintext: true } });
      await moreRefreshes(10);
      await rollOut({ current: 'k1', keys: { k1: K1 } });
      const clearLeft = await rotateTokenEncryption({ redis, match, encryptionKey: { current: 'k1', keys: { k1: K1 } }, dryRun: true });
      // From k1 to k2.
      await rollOut({ current: 'k1', keys: { k1: K1, k2: K2 } }); // 1. every instance can read k2
      await rollOut({ current: 'k2', keys: { k1: K1, k2: K2 } }); // 2. every instance writes k2
      const rotated = await rotateTokenEncryption({ redis, match, encryptionKey: { current: 'k2', keys: { k1: K1, k2: K2 } } }); // 3.
      await moreRefreshes(10);
      await rollOut({ current: 'k2', keys: { k2: K2 } }); // 4. k1 removed
      stopped = true;
      await Promise.all(traffic);

      const left = await rotateTokenEncryption({ redis, match, encryptionKey: { current: 'k2', keys: { k2: K2 } }, dryRun: true });
      let loggedOut = 0;
      for (const id of userIds) {
        const stored = await store(keyOf(id), { current: 'k2', keys: { k2: K2 } }).get();
        // A refresh with what the store holds: refused (reused, or its grant revoked) means the user must sign in again.
        if (stored === undefined || (await oauth.refresh(stored).then(() => false, (e: unknown) => e instanceof ReauthorizationRequiredError))) loggedOut++;
      }
      console.log("Move 'none' → k1 → k2 under traffic:", JSON.stringify({ calls, failures, encrypted, clearLeft, rotated, left, loggedOut }));
      expect(encrypted).toMatchObject({ underOldKeys: 0, unreadable: 0 });
      expect(encrypted.rewritten).toBeGreaterThanOrEqual(USERS - ACTIVE); // the idle users, in clear, at least
      expect(clearLeft).toEqual({ scanned: USERS, rewritten: 0, underOldKeys: 0, unreadable: 0, plaintext: 0 });
      expect(rotated.underOldKeys).toBe(0);
      expect(rotated.rewritten).toBeGreaterThanOrEqual(USERS - ACTIVE); // the idle users, at least
      expect(left).toEqual({ scanned: USERS, rewritten: 0, underOldKeys: 0, unreadable: 0, plaintext: 0 });
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

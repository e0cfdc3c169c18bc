/**
 * Issue 29, part 2, the PostgreSQL half: PostgresTokenStore with a keyring, and `rotateTokenEncryption` from
 * `@postsched/sdk/postgres` paging through the token table and rewriting each value under an older key by
 * compare-and-set; then the whole rotation under traffic (three app instances, each with its own pool, deployed one
 * after the other with each step's keyring while their users refresh). Against a real PostgreSQL server (started for
 * this file). Counted, never timed: users logged out, calls failed, values left under the old key.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthClient, ReauthorizationRequiredError, type TokenSet, UserClients, ValidationError } from '@postsched/sdk';
import { createTokenTable, type EncryptionKey, PostgresTokenStore, SharedTokenStoreError, rotateTokenEncryption } from '@postsched/sdk/postgres';
import { createFakeService } from '@postsched/sdk/testing';
import { type PostgresServer, startPostgresServer } from './postgres-server.js';

const K1 = Buffer.alloc(32, 1).toString('base64');
const K2 = Buffer.alloc(32, 2);
const K3 = Buffer.alloc(32, 3).toString('base64');
const KEYRING = { current: 'k2', keys: { k1: K1, k2: K2 } };
const K2_ONLY = { current: 'k2', keys: { k2: K2 } };

function tokens(label: string): TokenSet {
  return { accessToken: `at-${label}-secret`, refreshToken: `rt-${label}-secret`, expiresAt: 1_900_000_000_000, scopes: ['posts:read'], tokenType: 'bearer' };
}

let server: PostgresServer;
let pool: pg.Pool;
beforeAll(async () => {
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: server.url, max: 4 });
  pool.on('error', () => {});
});
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

let tables = 0;
/** A fresh table of its own for each test. */
async function newTable(): Promise<string> {
  const table = `rot_${++tables}`;
  await createTokenTable(pool, { table });
  return table;
}
const store = (table: string, key: string, encryptionKey: EncryptionKey | 'none') => new PostgresTokenStore({ pool, table, key, encryptionKey });
const valueOf = async (table: string, key: string) => (await pool.query(`SELECT tokens FROM ${table} WHERE key = $1`, [key])).rows[0]?.tokens as string | null | undefined;

describe('PostgresTokenStore with a keyring', () => {
  it("reads a value written with one key, writes under `current`, and a value under k2 reads once k1 is removed", async () => {
    const table = await newTable();
    await store(table, 'u', K1).set(tokens('one'));
    expect(await valueOf(table, 'u')).toMatch(/^enc:v1:/);
    expect(await store(table, 'u', KEYRING).get()).toEqual(tokens('one'));
    await store(table, 'u', KEYRING).set(tokens('two'), { expectedRefreshToken: 'rt-one-secret' });
    expect(await valueOf(table, 'u')).toMatch(/^enc:v2:k2:/);
    expect(await store(table, 'u', K2_ONLY).get()).toEqual(tokens('two'));
  });
});

describe('rotateTokenEncryption (PostgreSQL)', () => {
  it('counts with dryRun, rewrites every value under k1 across pages, and then every user reads with k1 removed', async () => {
    const table = await newTable();
    const users = Array.from({ length: 450 }, (_, i) => `user_${String(i).padStart(3, '0')}`); // three pages of 200
    for (const user of users) await store(table, user, K1).set(tokens(user));
    await store(table, 'already', KEYRING).set(tokens('already')); // under k2 already
    await store(table, 'lock-only', KEYRING).lock(async () => {}); // a row with a lock and no tokens

    expect(await rotateTokenEncryption({ pool, table, encryptionKey: KEYRING, dryRun: true })).toEqual({ scanned: 451, rewritten: 0, underOldKeys: 450, unreadable: 0, plaintext: 0 });
    expect(await valueOf(table, 'user_000')).toMatch(/^enc:v1:/); // dryRun wrote nothing

    const refreshedBefore = (await pool.query(`SELECT refreshed_at FROM ${table} WHERE key = 'user_000'`)).rows[0].refreshed_at;
    expect(await rotateTokenEncryption({ pool, table, encryptionKey: KEYRING })).toEqual({ scanned: 451, rewritten: 450, underOldKeys: 0, unreadable: 0, plaintext: 0 });
    expect(await rotateTokenEncryption({ pool, table, encryptionKey: K2_ONLY, dryRun: true })).toEqual({ scanned: 451, rewritten: 0, underOldKeys: 0, unreadable: 0, plaintext: 0 });

    for (const user of [...users, 'already']) expect(await store(table, user, K2_ONLY).get()).toEqual(tokens(user));
    expect(await valueOf(table, 'lock-only')).toBeNull();
    // A rotation is not a refresh: refreshed_at is the refresh's own.
    expect((await pool.query(`SELECT refreshed_at FROM ${table} WHERE key = 'user_000'`)).rows[0].refreshed_at).toEqual(refreshedBefore);
  });

  it('fails a dry run that finds values no key of the keyring opens (the final keyring, too early), naming the count', async () => {
    const table = await newTable();
    for (const user of ['a', 'b']) await store(table, user, K1).set(tokens(user));
    await store(table, 'lost', K3).set(tokens('lost')); // a key the keyring does not list
    await store(table, 'clear', 'none').set(tokens('clear')); // in clear, and the keyring does not allow it
    const error = await rotateTokenEncryption({ pool, table, encryptionKey: KEYRING, dryRun: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/^`encryptionKey` is missing a key: 2 of 4 stored values cannot be read with this keyring/);
    expect((error as Error).message).not.toMatch(/can be removed/);
    // k2 alone while a and b are still under k1: unreadable, never "none under older keys".
    await expect(rotateTokenEncryption({ pool, table, encryptionKey: K2_ONLY, dryRun: true })).rejects.toThrow(/is missing a key: 4 of 4 stored values/);
    // A run rewrites what it can and counts the rest, left as they are.
    expect(await rotateTokenEncryption({ pool, table, encryptionKey: KEYRING })).toEqual({ scanned: 4, rewritten: 2, underOldKeys: 0, unreadable: 2, plaintext: 1 });
    expect(await store(table, 'lost', K3).get()).toEqual(tokens('lost'));
    expect(await store(table, 'clear', 'none').get()).toEqual(tokens('clear'));
  });

  it("encrypts the values in clear under `current` while the keyring says allowPlaintext; the stores read them only then", async () => {
    const table = await newTable();
    const moving = { current: 'k1', keys: { k1: K1 }, allowPlaintext: true };
    const done = { current: 'k1', keys: { k1: K1 } };
    for (const user of ['a', 'b']) await store(table, user, 'none').set(tokens(user));
    await expect(store(table, 'a', done).get()).rejects.toMatchObject({ code: 'unreadable', problem: 'not_encrypted' });
    expect(await store(table, 'a', moving).get()).toEqual(tokens('a'));
    expect(await rotateTokenEncryption({ pool, table, encryptionKey: moving, dryRun: true })).toEqual({ scanned: 2, rewritten: 0, underOldKeys: 2, unreadable: 0, plaintext: 2 });
    expect(await rotateTokenEncryption({ pool, table, encryptionKey: moving })).toEqual({ scanned: 2, rewritten: 2, underOldKeys: 0, unreadable: 0, plaintext: 2 });
    expect(await valueOf(table, 'a')).toMatch(/^enc:v2:k1:/);
    for (const user of ['a', 'b']) expect(await store(table, user, done).get()).toEqual(tokens(user));
  });

  it('never overwrites a value a refresh wrote between its read and its write (compare-and-set)', async () => {
    const table = await newTable();
    await store(table, 'u', K1).set(tokens('old'));
    // The rotation's pool: right before its UPDATE, a refresh (under the old key, the worst case) stores newer tokens.
    let raced = false;
    const seen: string[] = [];
    const racing = {
      query: async (config: { text: string; values?: unknown[] }) => {
        seen.push(config.text.trim().split(/\s+/)[0]!);
        if (!raced && config.text.startsWith('UPDATE')) {
          raced = true;
          await store(table, 'u', K1).set(tokens('new'), { expectedRefreshToken: 'rt-old-secret' });
          // The rotation's compare-and-set on the value it read now writes nothing:
          expect((await pool.query(config.text, config.values)).rowCount).toBe(0);
          expect(await store(table, 'u', K1).get()).toEqual(tokens('new'));
        }
        return pool.query(config as never);
      },
    };
    const counts = await rotateTokenEncryption({ pool: racing, table, encryptionKey: KEYRING });
    expect(raced).toBe(true);
    expect(counts).toEqual({ scanned: 1, rewritten: 1, underOldKeys: 0, unreadable: 0, plaintext: 0 }); // read again, rewrote the new value
    expect(seen).toEqual(['SELECT', 'SELECT', 'UPDATE', 'SELECT', 'UPDATE']); // one page, read, lost swap, read, swap
    expect(await store(table, 'u', K2_ONLY).get()).toEqual(tokens('new'));
  });

  it('refuses wrong options with a ValidationError through the one option check; a missing table is a SharedTokenStoreError', async () => {
    await expect(rotateTokenEncryption({ pool } as never)).rejects.toThrow(/`encryptionKey` must be the stores' keyring/);
    await expect(rotateTokenEncryption({ pool, encryptionKey: KEYRING, dry: true } as never)).rejects.toThrow(/`dry` is not an option/);
    await expect(rotateTokenEncryption({ pool, table: 'x; DROP TABLE y', encryptionKey: KEYRING })).rejects.toBeInstanceOf(ValidationError);
    await expect(rotateTokenEncryption({ pool: {} as never, encryptionKey: KEYRING })).rejects.toBeInstanceOf(ValidationError);
    await expect(rotateTokenEncryption({ pool, encryptionKey: { current: 'k2', keys: { k1: K1 } } })).rejects.toBeInstanceOf(ValidationError);
    const error = await rotateTokenEncryption({ pool, table: 'no_such_table', encryptionKey: KEYRING }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SharedTokenStoreError);
    expect(error).toMatchObject({ code: 'unavailable', sqlState: '42P01', table: 'no_such_table' });
    expect((error as Error).message).not.toContain(K1);
  });
});

describe("a move 'none' → k1 → k2 under traffic (PostgreSQL): three app instances, each with its own pool, deployed one after the other at each step", () => {
  const APP = { clientId: 'app_rotation', clientSecret: 'secret_rotation_1234', redirectUris: ['http://127.0.0.1/callback'] };
  const USERS = 30;
  /** Users 0–14 call all along; 15–29 are idle: nothing writes them before rotateTokenEncryption. */
  const ACTIVE = 15;

  it('logs out nobody, and leaves every value readable under k2 alone once clear and k1 are refused', { timeout: 180_000 }, async () => {
    const table = await newTable();
    const fake = createFakeService({ apps: [APP], refreshTokenReuse: 'revoke-grant' });
    const baseUrl = (await fake.listen()).url;
    const oauth = new OAuthClient({ baseUrl, clientId: APP.clientId, clientSecret: APP.clientSecret, redirectUri: APP.redirectUris[0]! });
    const userIds = Array.from({ length: USERS }, (_, i) => `user_${i}`);
    for (const id of userIds) await store(table, id, 'none').set(fake.issueTokenSet({ clientId: APP.clientId })); // stored in clear

    /** An app instance: as a process of its own (its own OAuthClient, so its own memory of rotations, and its own pool). */
    interface Instance {
      readonly users: UserClients;
      readonly pool: pg.Pool;
      inFlight: number;
    }
    const pools: pg.Pool[] = [];
    const deploy = (encryptionKey: EncryptionKey | 'none'): Instance => {
      const own = new pg.Pool({ connectionString: server.url, max: 3 });
      own.on('error', () => {});
      pools.push(own);
      const ownOauth = new OAuthClient({ baseUrl, clientId: APP.clientId, clientSecret: APP.clientSecret, redirectUri: APP.redirectUris[0]! });
      const tokenStore = (id: string) => new PostgresTokenStore({ pool: own, table, key: id, encryptionKey });
      return { users: new UserClients({ oauth: ownOauth, baseUrl, store: tokenStore }), pool: own, inFlight: 0 };
    };
    /** Stops an instance as a deploy does: it finishes its requests, then exits (nothing of it writes any more). */
    const retire = async (instance: Instance) => {
      while (instance.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await instance.pool.end();
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

    try {
      await moreRefreshes(10);
      // From clear to k1: every instance reads k1 (still writing in clear), then writes k1; the rest is encrypted by
      // the rotation; then values in clear are refused.
      const moving = { current: 'k1', keys: { k1: K1 }, allowPlaintext: true };
      await rollOut({ current: 'none', keys: { k1: K1 }, allowPlaintext: true });
      await rollOut(moving);
      const encrypted = await rotateTokenEncryption({ pool, table, encryptionKey: moving });
      await moreRefreshes(10);
      await rollOut({ current: 'k1', keys: { k1: K1 } });
      const clearLeft = await rotateTokenEncryption({ pool, table, encryptionKey: { current: 'k1', keys: { k1: K1 } }, dryRun: true });
      // From k1 to k2.
      await rollOut({ current: 'k1', keys: { k1: K1, k2: K2 } }); // 1. every instance can read k2
      await rollOut(KEYRING); // 2. every instance writes k2
      const rotated = await rotateTokenEncryption({ pool, table, encryptionKey: KEYRING }); // 3. the values left under k1
      await moreRefreshes(10);
      await rollOut(K2_ONLY); // 4. k1 removed
      await moreRefreshes(10);
      stopped = true;
      await Promise.all(traffic);

      const left = await rotateTokenEncryption({ pool, table, encryptionKey: K2_ONLY, dryRun: true });
      let loggedOut = 0;
      for (const id of userIds) {
        const stored = await store(table, id, K2_ONLY).get();
        // A refresh with what the store holds: refused (reused, or its grant revoked) means the user must sign in again.
        if (stored === undefined || (await oauth.refresh(stored).then(() => false, (e: unknown) => e instanceof ReauthorizationRequiredError))) loggedOut++;
      }
      const underK2 = (await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE tokens LIKE 'enc:v2:k2:%'`)).rows[0].n as number;
      console.log("PostgreSQL: move 'none' → k1 → k2 under traffic:", JSON.stringify({ calls, failures, encrypted, clearLeft, rotated, left, underK2, loggedOut }));
      expect(encrypted).toMatchObject({ underOldKeys: 0, unreadable: 0 });
      expect(encrypted.rewritten).toBeGreaterThanOrEqual(USERS - ACTIVE); // the idle users, in clear, at least
      expect(clearLeft).toEqual({ scanned: USERS, rewritten: 0, underOldKeys: 0, unreadable: 0, plaintext: 0 });
      expect(rotated.underOldKeys).toBe(0);
      expect(rotated.rewritten).toBeGreaterThanOrEqual(USERS - ACTIVE); // the idle users, at least
      expect(left).toEqual({ scanned: USERS, rewritten: 0, underOldKeys: 0, unreadable: 0, plaintext: 0 });
      expect(underK2).toBe(USERS);
      expect(failures).toEqual({});
      expect(loggedOut).toBe(0);
      expect(calls).toBeGreaterThan(0);
    } finally {
      stopped = true;
      await Promise.allSettled(traffic);
      await Promise.allSettled(pools.filter((p) => !p.ended).map((p) => p.end()));
      await fake.close();
    }
  });
});

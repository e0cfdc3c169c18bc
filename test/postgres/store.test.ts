/**
 * PostgresTokenStore against a real PostgreSQL server (started for this file): the row, the compare-and-set in one
 * statement, the lease lock (one statement each: no connection held while the lock is), encryption bound to the
 * row's key, the columns a fleet queries (refreshed_at, needs reconnect), the table name check and typed errors.
 */
import { inspect } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthClient, ReauthorizationRequiredError, TokenManager, TokenStoreError, type TokenSet, UserClients, ValidationError } from '@postsched/sdk';
import { createTokenTable, PostgresTokenStore, SharedTokenStoreError, tokenTableSql } from '@postsched/sdk/postgres';
import { createFakeService } from '@postsched/sdk/testing';
import { type PostgresServer, startPostgresServer } from './postgres-server.js';
import { TEST_KEY } from '../support/token-key.js';

const KEY_A = Buffer.alloc(32, 7);
const KEY_B = Buffer.alloc(32, 9).toString('base64');

function tokens(label: string): TokenSet {
  return { accessToken: `at-${label}-secret-access`, refreshToken: `rt-${label}-secret-refresh`, expiresAt: 1_900_000_000_000, scopes: ['posts:read'], tokenType: 'bearer' };
}

let server: PostgresServer;
let pool: pg.Pool;
const pools: pg.Pool[] = [];
/** A pool of its own (closed after the file), e.g. of one connection. */
function newPool(max = 10): pg.Pool {
  const p = new pg.Pool({ connectionString: server.url, max });
  p.on('error', () => {}); // a connection the server ends while idle
  pools.push(p);
  return p;
}
beforeAll(async () => {
  server = await startPostgresServer();
  pool = newPool();
  await createTokenTable(pool);
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await server?.stop();
});

/** Counts the statements a pool runs. */
function counting(inner: pg.Pool): { pool: pg.Pool; statements: string[] } {
  const statements: string[] = [];
  const wrapper = { query: (config: { text: string }) => (statements.push(config.text.trim().split(/\s+/)[0]!), inner.query(config as never)) };
  return { pool: wrapper as unknown as pg.Pool, statements };
}

const rowOf = async (key: string, table = 'postsched_tokens') => (await pool.query(`SELECT * FROM ${table} WHERE key = $1`, [key])).rows[0];
const newKey = () => `user_${crypto.randomUUID()}`;

describe('PostgresTokenStore: the mark of a dead grant', () => {
  // The mark's contract runs in tokenStoreConformance (test/testing/token-store-conformance.test.ts), on every store.
  it('getGrant() tells when the tokens were last written (refreshed_at), to the millisecond', async () => {
    const key = newKey();
    const store = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key });
    const before = Date.now();
    await store.set(tokens('one'));
    const { refreshedAt } = await store.getGrant();
    expect(Number.isInteger(refreshedAt)).toBe(true);
    expect(Math.abs(refreshedAt! - before)).toBeLessThan(60_000);
  });
});

describe('PostgresTokenStore', () => {
  it('returns undefined before any tokens are stored, then the stored tokens, through any store of the row', async () => {
    const key = newKey();
    const store = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key });
    expect(await store.get()).toBeUndefined();
    await store.set(tokens('one'));
    expect(await store.get()).toEqual(tokens('one'));
    expect(await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: newPool(1), key }).get()).toEqual(tokens('one'));
  });

  it('reads a still-valid token with one statement, and compare-and-sets with one statement', async () => {
    const key = newKey();
    await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key }).set({ ...tokens('one'), expiresAt: Date.now() + 3_600_000 });
    const { pool: counted, statements } = counting(pool);
    const store = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: counted, key });
    const manager = new TokenManager({ oauth: { refresh: async () => tokens('two') }, store });
    expect(await manager.getAccessToken()).toBe(tokens('one').accessToken);
    expect(statements).toEqual(['SELECT']); // no lock
    statements.length = 0;
    expect(await store.set(tokens('two'), { expectedRefreshToken: tokens('one').refreshToken })).toBe(true);
    expect(statements).toEqual(['INSERT']);
    expect(await store.set(tokens('three'), { expectedRefreshToken: tokens('one').refreshToken })).toBe(false);
    expect(await store.get()).toEqual(tokens('two'));
  });

  it('compare-and-set: a write over a value changed by another store since it was read is decided again, never blind', async () => {
    const key = newKey();
    const a = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key });
    const b = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key });
    await a.set(tokens('one'));
    expect(await b.get()).toEqual(tokens('one'));
    expect(await a.set(tokens('two'), { expectedRefreshToken: tokens('one').refreshToken })).toBe(true);
    // b last saw 'one': its write expecting 'one' is refused, as the row now holds 'two'.
    expect(await b.set(tokens('late'), { expectedRefreshToken: tokens('one').refreshToken })).toBe(false);
    expect(await a.get()).toEqual(tokens('two'));
    // A repeated write of the very tokens stored goes through (a save whose outcome was unknown).
    expect(await b.set(tokens('two'), { expectedRefreshToken: tokens('one').refreshToken })).toBe(true);
  });

  it('sets refreshed_at on every write and marks the row when the service refuses its refresh token; connect clears it', async () => {
    const fake = createFakeService({ apps: [{ clientId: 'app_pg', clientSecret: 'secret_pg_1234', redirectUris: ['http://127.0.0.1/cb'] }] });
    const { url } = await fake.listen();
    try {
      const oauth = new OAuthClient({ baseUrl: url, clientId: 'app_pg', clientSecret: 'secret_pg_1234', redirectUri: 'http://127.0.0.1/cb' });
      const key = newKey();
      const users = new UserClients({ oauth, baseUrl: url, store: (userId) => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: userId }) });
      await users.connect(key, fake.issueTokenSet({ clientId: 'app_pg' }));
      const connected = await rowOf(key);
      expect(connected.refreshed_at).toBeInstanceOf(Date);
      expect(connected).toMatchObject({ needs_reconnect_reason: null, needs_reconnect_since: null });

      // The grant is gone at the service (refresh token unknown): the refresh is refused.
      await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key }).set({ ...tokens('revoked'), expiresAt: Date.now() - 1_000 });
      const manager = new TokenManager({ oauth, store: new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key }) }); // another process
      const error = await manager.getAccessToken().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReauthorizationRequiredError);
      const marked = await rowOf(key);
      expect(marked.needs_reconnect_reason).toBe('invalid_grant');
      expect(marked.needs_reconnect_since).toBeInstanceOf(Date);
      const refused = await pool.query('SELECT count(*)::int AS n FROM postsched_tokens WHERE needs_reconnect_reason IS NOT NULL AND key = $1', [key]);
      expect(refused.rows[0].n).toBe(1);

      await users.connect(key, fake.issueTokenSet({ clientId: 'app_pg' }));
      const reconnected = await rowOf(key);
      expect(reconnected).toMatchObject({ needs_reconnect_reason: null, needs_reconnect_since: null });
      expect(reconnected.refreshed_at.getTime()).toBeGreaterThanOrEqual(marked.refreshed_at.getTime());
      expect(await users.client(key).accounts.list().toArray()).toBeInstanceOf(Array);
    } finally {
      await fake.close();
    }
  });

  it('does not mark a row whose tokens another process replaced since they were refused', async () => {
    const key = newKey();
    const store = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key });
    await store.set(tokens('old'));
    await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key }).set(tokens('new'));
    await store.markReauthorizationRequired('invalid_grant', tokens('old'));
    expect((await rowOf(key)).needs_reconnect_reason).toBeNull();
    await store.markReauthorizationRequired('invalid_grant', tokens('new'));
    expect((await rowOf(key)).needs_reconnect_reason).toBe('invalid_grant');
  });

  describe('the lock', () => {
    it('holds no connection while it is held: a pool of one connection serves the holder and a waiter', async () => {
      const key = newKey();
      const one = newPool(1);
      const a = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: one, key, lockTtlMs: 2_000 });
      const b = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: one, key, lockTtlMs: 2_000 });
      await a.set(tokens('one'));
      const order: string[] = [];
      let entered!: () => void;
      const aIn = new Promise<void>((resolve) => (entered = resolve));
      const holder = a.lock(async () => {
        order.push('a in');
        entered();
        // Another store of the same (one-connection) pool reads and waits while a holds the lock.
        expect(await b.get()).toEqual(tokens('one'));
        await new Promise((resolve) => setTimeout(resolve, 300));
        await a.set(tokens('two'));
        order.push('a out');
      });
      await aIn;
      await b.lock(async () => void order.push('b in'));
      await holder;
      expect(order).toEqual(['a in', 'a out', 'b in']);
      expect(await b.get()).toEqual(tokens('two'));
      expect((await rowOf(key)).lock_owner).toBeNull(); // released
    });

    it('refuses a write inside the lock once the lock expired and another holder took it (lock_lost)', async () => {
      const key = newKey();
      const a = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key, lockTtlMs: 200 });
      const b = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key, lockTtlMs: 200 });
      await a.set(tokens('one'));
      const error = await a
        .lock(async () => {
          const until = Date.now() + 400; // a stalled event loop: no extension
          while (Date.now() < until) {
            // stalled
          }
          await b.lock(async () => b.set(tokens('b')));
          await a.set(tokens('a-late'));
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SharedTokenStoreError);
      expect(error).toMatchObject({ code: 'lock_lost', operation: 'set', key });
      expect(await a.get()).toEqual(tokens('b'));
    });

    it('times out waiting with a typed error (lock_timeout) while another holder keeps it', async () => {
      const key = newKey();
      const a = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key });
      const b = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key, lockWaitMs: 300 });
      let release!: () => void;
      const held = a.lock(() => new Promise<void>((resolve) => (release = resolve)));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const error = await b.lock(async () => 'never').catch((e: unknown) => e);
      release();
      await held;
      expect(error).toBeInstanceOf(TokenStoreError);
      expect(error).toMatchObject({ code: 'lock_timeout', operation: 'lock' });
    });
  });

  describe('with an encryptionKey', () => {
    it('stores ciphertext that holds none of the tokens, bound to the row key', async () => {
      const key = newKey();
      const store = new PostgresTokenStore({ pool, key, encryptionKey: KEY_A });
      await store.set(tokens('enc'));
      const raw = String((await rowOf(key)).tokens);
      expect(raw.startsWith('enc:v1:')).toBe(true);
      for (const secret of ['at-enc', 'rt-enc', 'secret', 'accessToken']) expect(raw).not.toContain(secret);
      expect(await store.get()).toEqual(tokens('enc'));
      const victim = newKey();
      await pool.query('INSERT INTO postsched_tokens (key, tokens) VALUES ($1, $2)', [victim, raw]);
      await expect(new PostgresTokenStore({ pool, key: victim, encryptionKey: KEY_A }).get()).rejects.toMatchObject({ code: 'unreadable', problem: 'wrong_key_or_tampered' });
    });

    it('fails with a typed error, never garbage or a secret, under the wrong key or none', async () => {
      const key = newKey();
      await new PostgresTokenStore({ pool, key, encryptionKey: KEY_A }).set(tokens('wk'));
      const error = await new PostgresTokenStore({ pool, key, encryptionKey: KEY_B }).get().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SharedTokenStoreError);
      expect(error).toMatchObject({ code: 'unreadable', problem: 'wrong_key_or_tampered', key, operation: 'get' });
      expect(inspect(error, { depth: 5 })).not.toContain('secret');
      await expect(new PostgresTokenStore({ encryptionKey: 'none', pool, key }).get()).rejects.toMatchObject({ problem: 'missing_key' });
    });
  });

  describe('the table', () => {
    it('is made once, idempotently, under any valid name, with the index for "refreshed before X"', async () => {
      await pool.query('CREATE SCHEMA IF NOT EXISTS app');
      await createTokenTable(pool, { table: 'app.user_tokens' });
      await createTokenTable(pool, { table: 'app.user_tokens' });
      const key = newKey();
      await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key, table: 'app.user_tokens' }).set(tokens('t'));
      expect(await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key, table: 'app.user_tokens' }).get()).toEqual(tokens('t'));
      expect(await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key }).get()).toBeUndefined(); // another table
      const index = await pool.query("SELECT indexdef FROM pg_indexes WHERE schemaname = 'app' AND tablename = 'user_tokens' AND indexname = 'user_tokens_refreshed_at_idx'");
      expect(index.rows[0].indexdef).toContain('(refreshed_at)');
      expect(tokenTableSql({ table: 'app.user_tokens' })).toContain('CREATE TABLE IF NOT EXISTS "app"."user_tokens" (');
      expect(tokenTableSql()).toContain('"postsched_tokens"');
    });

    it.each([['tokens; DROP TABLE x'], ['"quoted"'], ['a.b.c'], [''], ['1starts_with_digit'], [42]])('refuses the table name %j with a ValidationError', (table) => {
      expect(() => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: 'k', table: table as string })).toThrow(ValidationError);
      expect(() => tokenTableSql({ table: table as string })).toThrow(/`table`/);
    });

    it('says how to make the table when it is missing, as a typed error', async () => {
      const error = await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: 'k', table: 'no_such_table' }).get().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SharedTokenStoreError);
      expect(error).toMatchObject({ code: 'unavailable', sqlState: '42P01' });
      expect((error as Error).message).toContain('createTokenTable');
    });
  });

  it('refuses postgres.js by name, and anything that is not a pool', () => {
    const postgresJs = Object.assign(() => {}, { unsafe: () => {} });
    expect(() => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: postgresJs as never, key: 'k' })).toThrow(/postgres\.js.*node-postgres `Pool`/);
    expect(() => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: {} as never, key: 'k' })).toThrow(ValidationError);
    expect(() => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: '' })).toThrow(ValidationError);
    expect(() => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: 'k', statementTimeoutMs: 0 })).toThrow(/statementTimeoutMs/);
  });

  it("refuses to start without a key (an unset variable), naming the likely cause and how to make one; 'none' is the explicit word for clear", () => {
    const error = (() => {
      try {
        new PostgresTokenStore({ pool, key: 'k', encryptionKey: process.env['POSTSCHED_TEST_UNSET_KEY'] });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(['encryptionKey']);
    expect((error as Error).message).toMatch(/^`encryptionKey` is undefined: .*unset environment variable .*TOKEN_ENCRYPTION_KEY.*openssl rand -base64 32/);
    expect(new PostgresTokenStore({ pool, key: 'k', encryptionKey: 'none' }).toJSON()).toMatchObject({ encrypted: false });
  });

  it('shows neither the encryption key nor the connection string in inspect or JSON output', () => {
    const store = new PostgresTokenStore({ pool, key: 'user_1', encryptionKey: KEY_B });
    for (const shown of [inspect(store, { showHidden: true, depth: 10 }), JSON.stringify(store)]) {
      expect(shown).toContain('user_1');
      expect(shown).not.toContain(KEY_B);
      expect(shown).not.toContain('127.0.0.1');
    }
  });
});


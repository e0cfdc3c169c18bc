/**
 * `createTokenTable` and the Postgres store's typed failures against a real PostgreSQL server (started for this
 * file): many processes creating the table at once, a table in a system schema, a key PostgreSQL cannot store, a pool
 * that answers something else than a result, a table name whose case an unquoted migration folded.
 */
import { TEST_KEY } from '../support/token-key.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TokenSet, ValidationError } from '@postsched/sdk';
import { createTokenTable, PostgresTokenStore, SharedTokenStoreError } from '@postsched/sdk/postgres';
import { type PostgresServer, startPostgresServer } from './postgres-server.js';

const TOKENS: TokenSet = { accessToken: 'at-secret-access', refreshToken: 'rt-secret-refresh', expiresAt: 1_900_000_000_000, scopes: ['posts:read'], tokenType: 'bearer' };

let server: PostgresServer;
const pools: pg.Pool[] = [];
function newPool(max = 10): pg.Pool {
  const p = new pg.Pool({ connectionString: server.url, max });
  p.on('error', () => {});
  pools.push(p);
  return p;
}
beforeAll(async () => {
  server = await startPostgresServer();
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await server?.stop();
});

describe('createTokenTable', () => {
  it('succeeds for every one of 8 clients creating the same 6 tables at once (48 calls)', async () => {
    // A client per process: each its own connection, all sent together.
    const clients = Array.from({ length: 8 }, () => newPool(6));
    await Promise.all(clients.map((c) => c.query('SELECT 1'))); // connected before the race
    const tables = Array.from({ length: 6 }, (_, i) => `race_${i}_${crypto.randomUUID().slice(0, 8)}`);
    const outcomes = await Promise.allSettled(clients.flatMap((client) => tables.map((table) => createTokenTable(client, { table }))));
    const failed = outcomes.flatMap((o) => (o.status === 'rejected' ? [`${(o.reason as Error).name}: ${(o.reason as Error).message}`] : []));
    expect(failed).toEqual([]);
    for (const table of tables) {
      await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: clients[0]!, key: 'u1', table }).set(TOKENS);
      expect(await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: clients[7]!, key: 'u1', table }).get()).toEqual(TOKENS);
    }
  });

  it('fails typed, with the SQLSTATE, in a schema PostgreSQL refuses (pg_catalog)', async () => {
    const error = await createTokenTable(newPool(1), { table: 'pg_catalog.postsched_tokens' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SharedTokenStoreError);
    expect(error).toMatchObject({ code: 'refused', table: 'pg_catalog.postsched_tokens', sqlState: expect.stringMatching(/^42/) });
    expect((error as Error).message).toMatch(/^createTokenTable \(table pg_catalog\.postsched_tokens\) failed: PostgreSQL failed/);
  });

  it('fails typed when the server is unreachable', async () => {
    const gone = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', connectionTimeoutMillis: 2_000 });
    gone.on('error', () => {});
    pools.push(gone);
    const error = await createTokenTable(gone).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SharedTokenStoreError);
    expect(error).toMatchObject({ code: 'unavailable' });
  });
});

describe('PostgresTokenStore: input PostgreSQL cannot keep apart, and broken answers', () => {
  it('refuses ids with a lone surrogate, which UTF-8 would turn into one row for two users', async () => {
    const pool = newPool(2);
    await createTokenTable(pool);
    for (const key of ['\uD800', '\uDBFF', 'user\uD800', 'user\uDC00', '\uDC00x']) {
      expect(() => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key })).toThrow(ValidationError);
    }
    expect(() => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: 'user\uD800' })).toThrow(/`key` holds a lone UTF-16 surrogate \(U\+D800 at index 4\)/);
    // A well-formed pair is text like any other.
    const emoji = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: 'user\uD83D\uDE00' });
    await emoji.set(TOKENS);
    expect(await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: 'user\uD83D\uDE00' }).get()).toEqual(TOKENS);
  });

  it('refuses a NUL in the key up front, and a NUL PostgreSQL refuses (22021) is a permanent failure', async () => {
    const pool = newPool(2);
    await createTokenTable(pool);
    expect(() => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: 'user\u00001' })).toThrow(/`key` holds a NUL character/);
    // A pool that slips a NUL into the statement's values: PostgreSQL answers 22021.
    const nul = { query: (config: { text: string; values: unknown[] }) => pool.query({ text: config.text, values: config.values.map((v, i) => (i === 0 ? `${String(v)}\u0000` : v)) }) };
    const error = await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: nul as never, key: 'user_nul' }).get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SharedTokenStoreError);
    expect(error).toMatchObject({ code: 'refused', sqlState: '22021' });
  });

  it.each([['undefined', undefined], ['{}', {}], ['{ rows: null }', { rows: null }], ['{ rows: [], rowCount: "1" }', { rows: [], rowCount: '1' }]])(
    'fails get() and set() typed when the pool answers %s',
    async (_, answer) => {
      const pool = { query: async () => answer };
      const store = new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: pool as never, key: 'user_1' });
      for (const call of [() => store.get(), () => store.set(TOKENS)]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SharedTokenStoreError);
        expect(error).toMatchObject({ code: 'bad_result' });
      }
    },
  );

  it("names the case of the table's name when an unquoted migration made it in lower case", async () => {
    const pool = newPool(2);
    await pool.query('CREATE TABLE IF NOT EXISTS Tokens (key text PRIMARY KEY, tokens text, refreshed_at timestamptz, needs_reconnect_reason text, needs_reconnect_since timestamptz, lock_owner text, lock_expires_at timestamptz)');
    const error = await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: 'user_1', table: 'Tokens' }).get().catch((e: unknown) => e);
    expect(error).toMatchObject({ sqlState: '42P01' });
    expect((error as Error).message).toContain(`Pass \`table: 'tokens'\``);
    expect((error as Error).message).toContain('folds unquoted names to lower case');
    expect(await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: 'user_1', table: 'tokens' }).get()).toBeUndefined();
  });
});

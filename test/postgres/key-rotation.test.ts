/**
 * Issue 29, part 2, the PostgreSQL half: PostgresTokenStore with a keyring, and `rotateTokenEncryption` from
 * `@postsched/sdk/postgres` paging through the token table and rewriting each value under an older key by
 * compare-and-set. Against a real PostgreSQL server (started for this file). Counted, never timed.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TokenSet, ValidationError } from '@postsched/sdk';
import { createTokenTable, type EncryptionKey, PostgresTokenStore, PostgresTokenStoreError, rotateTokenEncryption } from '@postsched/sdk/postgres';
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
const store = (table: string, key: string, encryptionKey?: EncryptionKey) => new PostgresTokenStore({ pool, table, key, ...(encryptionKey === undefined ? {} : { encryptionKey }) });
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
    await store(table, 'lost', K3).set(tokens('lost')); // a key the keyring does not list
    await store(table, 'clear').set(tokens('clear')); // not encrypted: left alone, not counted
    await store(table, 'lock-only', KEYRING).lock(async () => {}); // a row with a lock and no tokens

    expect(await rotateTokenEncryption({ pool, table, encryptionKey: KEYRING, dryRun: true })).toEqual({ scanned: 452, rewritten: 0, underOldKeys: 450, unreadable: 1 });
    expect(await valueOf(table, 'user_000')).toMatch(/^enc:v1:/); // dryRun wrote nothing

    const refreshedBefore = (await pool.query(`SELECT refreshed_at FROM ${table} WHERE key = 'user_000'`)).rows[0].refreshed_at;
    expect(await rotateTokenEncryption({ pool, table, encryptionKey: KEYRING })).toEqual({ scanned: 452, rewritten: 450, underOldKeys: 0, unreadable: 1 });
    expect(await rotateTokenEncryption({ pool, table, encryptionKey: K2_ONLY, dryRun: true })).toEqual({ scanned: 452, rewritten: 0, underOldKeys: 0, unreadable: 1 });

    for (const user of [...users, 'already']) expect(await store(table, user, K2_ONLY).get()).toEqual(tokens(user));
    expect(await store(table, 'clear').get()).toEqual(tokens('clear'));
    expect(await valueOf(table, 'lock-only')).toBeNull();
    expect(await store(table, 'lost', K3).get()).toEqual(tokens('lost')); // left as it was
    // A rotation is not a refresh: refreshed_at is the refresh's own.
    expect((await pool.query(`SELECT refreshed_at FROM ${table} WHERE key = 'user_000'`)).rows[0].refreshed_at).toEqual(refreshedBefore);
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
    expect(counts).toEqual({ scanned: 1, rewritten: 1, underOldKeys: 0, unreadable: 0 }); // read again, rewrote the new value
    expect(seen).toEqual(['SELECT', 'SELECT', 'UPDATE', 'SELECT', 'UPDATE']); // one page, read, lost swap, read, swap
    expect(await store(table, 'u', K2_ONLY).get()).toEqual(tokens('new'));
  });

  it('refuses wrong options with a ValidationError through the one option check; a missing table is a PostgresTokenStoreError', async () => {
    await expect(rotateTokenEncryption({ pool } as never)).rejects.toThrow(/`encryptionKey` must be the stores' keyring/);
    await expect(rotateTokenEncryption({ pool, encryptionKey: KEYRING, dry: true } as never)).rejects.toThrow(/`dry` is not an option/);
    await expect(rotateTokenEncryption({ pool, table: 'x; DROP TABLE y', encryptionKey: KEYRING })).rejects.toBeInstanceOf(ValidationError);
    await expect(rotateTokenEncryption({ pool: {} as never, encryptionKey: KEYRING })).rejects.toBeInstanceOf(ValidationError);
    await expect(rotateTokenEncryption({ pool, encryptionKey: { current: 'k2', keys: { k1: K1 } } })).rejects.toBeInstanceOf(ValidationError);
    const error = await rotateTokenEncryption({ pool, table: 'no_such_table', encryptionKey: KEYRING }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PostgresTokenStoreError);
    expect(error).toMatchObject({ code: 'unavailable', sqlState: '42P01', table: 'no_such_table' });
    expect((error as Error).message).not.toContain(K1);
  });
});

/** `createTokenTable` and `tokenTableSql`: the token table, made by the SDK or by the app's own migrations. */
import { checkPool, PgConnection, type PgPoolLike } from './pg-connection.js';
import { tableName, tableSql } from './token-table.js';

/** Options of `createTokenTable` and `tokenTableSql`. */
export interface TokenTableOptions {
  /** The table's name, optionally schema-qualified (`app.postsched_tokens`). Default `postsched_tokens`. */
  table?: string;
}

/**
 * The statements that make the token table and its index (`CREATE TABLE IF NOT EXISTS …`,
 * `CREATE INDEX IF NOT EXISTS …`), for an app's own migrations. Columns: `key` (primary key: the store's `key`), `tokens` (the TokenSet's JSON,
 * or its AES-256-GCM envelope), `refreshed_at` (indexed: when tokens were last written by a refresh or a connect),
 * `needs_reconnect_reason` and `needs_reconnect_since` (set when the service refused the refresh token; cleared by the
 * next connect), `lock_owner` and `lock_expires_at` (the row's lock).
 *
 * @example
 * fs.writeFileSync('migrations/0007_postsched_tokens.sql', tokenTableSql({ table: 'postsched_tokens' }))
 */
export function tokenTableSql(options: TokenTableOptions = {}): string {
  return tableSql(tableName(options.table));
}

/** How long `createTokenTable` waits, other processes' creation of the table included. */
const CREATE_TIMEOUT_MS = 30_000;

/**
 * `sql` behind a transaction-scoped advisory lock (an arbitrary constant: "psch"), so that processes creating a table
 * at once run one after the other. Unlocked, two `CREATE TABLE IF NOT EXISTS` can both find no table and the second
 * fails (23505 on the table's row type, 42710 on the index). One query of several statements is one implicit
 * transaction, which the lock lasts. Every table the SDK makes (tokens, webhook dedupe) is made through it.
 */
export const serialized = (sql: string): string => `SELECT pg_advisory_xact_lock(1886610280);\n${sql}`;

/**
 * Makes the token table if it does not exist yet (run once at start-up, or use `tokenTableSql()` in a migration).
 * Processes that call it at once all succeed. Every failure is a `SharedTokenStoreError` (`code: 'refused'` with
 * its `sqlState` when PostgreSQL refused the statement, e.g. 42501 in a schema the role may not write to).
 *
 * @example
 * await createTokenTable(pool, { table: 'postsched_tokens' })
 */
export async function createTokenTable(pool: PgPoolLike, options: TokenTableOptions = {}): Promise<void> {
  const table = tableName(options.table);
  await new PgConnection(checkPool(pool), { key: '', table: table.name }, CREATE_TIMEOUT_MS).run('set', serialized(tableSql(table)));
}

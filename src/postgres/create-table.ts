/** `createTokenTable` and `tokenTableSql`: the token table, made by the SDK or by the app's own migrations. */
import { checkPool, type PgPoolLike } from './pg-connection.js';
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

/**
 * Makes the token table if it does not exist yet (run once at start-up, or use `tokenTableSql()` in a migration).
 *
 * @example
 * await createTokenTable(pool, { table: 'postsched_tokens' })
 */
export async function createTokenTable(pool: PgPoolLike, options: TokenTableOptions = {}): Promise<void> {
  const sql = tokenTableSql(options);
  await checkPool(pool).query({ text: sql });
}

/**
 * The token table: its name (checked, then quoted: never interpolated unchecked), its DDL and the statements of
 * `PostgresTokenStore`. One row per user (`key`), holding beside the (encrypted) TokenSet what a fleet queries
 * without decrypting (when the tokens were last written by a refresh or a connect, and whether the grant needs
 * reconnecting) and the row's lock: a lease (owner token and expiry) that each statement takes, extends or frees in
 * one autocommit statement, so no connection is held while the token request runs.
 */
import { invalidValue } from '../core/invalid-option.js';

export const DEFAULT_TABLE = 'postsched_tokens';

/** `table` or `schema.table`: each part a plain identifier, so that quoted it names exactly that table. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/;

/** The checked table name: `{ name, quoted, index }`; anything else is a `ValidationError`. */
export function tableName(table: unknown = DEFAULT_TABLE): { name: string; quoted: string; index: string; reconnectIndex: string } {
  const parts = typeof table === 'string' ? table.split('.') : [];
  if (parts.length === 0 || parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    invalidValue('table', table, ': give a table name of letters, digits and underscores (at most 40), optionally schema-qualified ("app.postsched_tokens").', ['table']);
  }
  const quoted = parts.map((part) => `"${part}"`).join('.');
  const last = parts[parts.length - 1];
  return { name: table as string, quoted, index: `"${last}_refreshed_at_idx"`, reconnectIndex: `"${last}_needs_reconnect_idx"` };
}

/**
 * `CREATE TABLE IF NOT EXISTS …` and its indexes: what `createTokenTable` runs, for an app's own migrations. The
 * `refreshed_at` index orders the sweep's claims (`keepGrantsAlive`); the partial one lists the grants that need
 * reconnecting (`grants({ status: 'needs_reconnect' })`) without reading the others. Both `IF NOT EXISTS`: running it
 * again on a table made before adds what is missing, and nothing else.
 */
export function tableSql(table: ReturnType<typeof tableName>): string {
  return `CREATE TABLE IF NOT EXISTS ${table.quoted} (
  key text PRIMARY KEY,
  tokens text,
  refreshed_at timestamptz,
  needs_reconnect_reason text,
  needs_reconnect_since timestamptz,
  lock_owner text,
  lock_expires_at timestamptz
);
CREATE INDEX IF NOT EXISTS ${table.index} ON ${table.quoted} (refreshed_at);
CREATE INDEX IF NOT EXISTS ${table.reconnectIndex} ON ${table.quoted} (key) WHERE needs_reconnect_reason IS NOT NULL;
`;
}

/** Each table's statements, made once: every store of a table shares the same strings (a store per user). */
const byTable = new Map<string, ReturnType<typeof makeStatements>>();

/** The statements of one table (`table`: quoted). `$1` is always the row's key. */
export function statements(table: string): ReturnType<typeof makeStatements> {
  let found = byTable.get(table);
  if (found === undefined) byTable.set(table, (found = makeStatements(table)));
  return found;
}

function makeStatements(table: string) {
  const written = 'refreshed_at = now(), needs_reconnect_reason = NULL, needs_reconnect_since = NULL';
  const lease = `now() + $3::integer * interval '1 millisecond'`;
  return {
    get: `SELECT tokens FROM ${table} WHERE key = $1`,
    /** The tokens, the mark and when the tokens were written (epoch ms). */
    getGrant: `SELECT tokens, needs_reconnect_reason AS reason, floor(extract(epoch FROM needs_reconnect_since) * 1000) AS since,
      floor(extract(epoch FROM refreshed_at) * 1000) AS refreshed_at FROM ${table} WHERE key = $1`,
    /** A waiter's look: the tokens, and whether the lock is held. */
    look: `SELECT tokens, (lock_owner IS NOT NULL AND lock_expires_at > now()) AS held FROM ${table} WHERE key = $1`,
    /** $2 value. A new sign-in replaces whatever is stored. */
    set: `INSERT INTO ${table} AS t (key, tokens, refreshed_at) VALUES ($1, $2, now())
      ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, ${written}`,
    /**
     * $2 value, $3 the value read (NULL: none): written only while the row still holds exactly that; never over tokens
     * removed on purpose (`remove`: no tokens, a mark).
     */
    setIfUnchanged: `INSERT INTO ${table} AS t (key, tokens, refreshed_at) VALUES ($1, $2, now())
      ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, ${written} WHERE t.tokens IS NOT DISTINCT FROM $3
      AND (t.tokens IS NOT NULL OR t.needs_reconnect_reason IS NULL)
      RETURNING 1`,
    /** $2 value, $3 owner: written only while the lock is still that holder's. */
    setIfLockOwner: `UPDATE ${table} SET tokens = $2, ${written} WHERE key = $1 AND lock_owner = $3 AND lock_expires_at > now()`,
    /**
     * $2 owner, $3 TTL in ms: takes the lock when it is free, expired or already $2's (a take sent again), making the
     * row if missing. `expired`: the lease before was never released (a release clears `lock_owner`), read from the
     * statement's snapshot.
     */
    take: `WITH before AS (SELECT lock_owner FROM ${table} WHERE key = $1)
      INSERT INTO ${table} AS t (key, lock_owner, lock_expires_at) VALUES ($1, $2, ${lease})
      ON CONFLICT (key) DO UPDATE SET lock_owner = excluded.lock_owner, lock_expires_at = excluded.lock_expires_at
      WHERE t.lock_owner IS NULL OR t.lock_owner = $2 OR t.lock_expires_at <= now()
      RETURNING EXISTS (SELECT 1 FROM before WHERE lock_owner <> $2) AS expired`,
    /** $2 owner, $3 TTL in ms. */
    extend: `UPDATE ${table} SET lock_expires_at = ${lease} WHERE key = $1 AND lock_owner = $2 AND lock_expires_at > now()`,
    /** $2 owner. */
    release: `UPDATE ${table} SET lock_owner = NULL, lock_expires_at = NULL WHERE key = $1 AND lock_owner = $2`,
    /** Key rotation's pages (keyset pagination): $1 the last key of the page before ('' first), $2 the page size. */
    page: `SELECT key FROM ${table} WHERE key > $1 ORDER BY key LIMIT $2`,
    /** Key rotation's compare-and-set: $2 the re-encrypted value, $3 the value read; the other columns are left alone. */
    reencrypt: `UPDATE ${table} SET tokens = $2 WHERE key = $1 AND tokens = $3`,
    /** $2 reason, $3 the value whose refresh token was refused: marked only while the row still holds it, unmarked. */
    markReconnect: `UPDATE ${table} SET needs_reconnect_reason = $2, needs_reconnect_since = now()
      WHERE key = $1 AND tokens = $3 AND needs_reconnect_reason IS NULL`,
    /** The tokens removed on purpose (a disconnect): none left, and the mark `no_tokens` that keeps them from being written back. */
    remove: `INSERT INTO ${table} AS t (key, needs_reconnect_reason, needs_reconnect_since) VALUES ($1, 'no_tokens', now())
      ON CONFLICT (key) DO UPDATE SET tokens = NULL, refreshed_at = NULL, needs_reconnect_reason = 'no_tokens', needs_reconnect_since = now()`,
  };
}


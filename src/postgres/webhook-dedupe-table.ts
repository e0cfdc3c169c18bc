/**
 * The webhook dedupe table of `PostgresWebhookDedupe`: its name (checked and quoted as the token table's), its DDL
 * (`webhookDedupeTableSql`, for an app's migrations, or `createWebhookDedupeTable`, safe to run from every process at
 * once) and its statements, each one atomic statement (never a transaction held open).
 */
import { checkOptions, integerOption, MAX_TIMEOUT_MS, optionNames } from '../core/invalid-option.js';
import { WebhookDedupeUnavailableError, type WebhookDedupeOperation } from '../store/webhook-dedupe-error.js';
import { checkPool, PgConnection, type PgPoolLike } from './pg-connection.js';
import { tableName } from './token-table.js';
import { serialized } from './create-table.js';

/** Options of `createWebhookDedupeTable` and `webhookDedupeTableSql`. */
export interface WebhookDedupeTableOptions {
  /** The table's name, optionally schema-qualified (`app.postsched_webhook_events`). Default `postsched_webhook_events`. */
  table?: string;
  /** `createWebhookDedupeTable` only: its time bound, in ms (it may wait for another process making the table). Default 10 000. */
  statementTimeoutMs?: number;
}

const OPTIONS = /* @__PURE__ */ optionNames<WebhookDedupeTableOptions>({ table: 0, statementTimeoutMs: 0 });

export const DEFAULT_WEBHOOK_TABLE = 'postsched_webhook_events';

/** The checked table: its name as given, quoted, and the name of its expiry index. */
export function webhookTable(table: unknown = DEFAULT_WEBHOOK_TABLE): { name: string; quoted: string; index: string } {
  const { name, quoted } = tableName(table);
  return { name, quoted, index: `"${name.split('.').pop()!}_expires_at_idx"` };
}

/**
 * The statements that make the webhook dedupe table and its index (`CREATE TABLE IF NOT EXISTS …`,
 * `CREATE INDEX IF NOT EXISTS …`), for an app's own migrations. One row per event (`post_id`, `key`: its
 * `webhookDedupeKey`; `claim_id` while in flight, NULL once done) and one per post (`key` '': `newest`, the latest
 * `created_at` handled, in ms); every row has an `expires_at` (indexed), past which it is ignored and deleted.
 *
 * @example
 * fs.writeFileSync('migrations/0008_postsched_webhook_events.sql', webhookDedupeTableSql())
 */
export function webhookDedupeTableSql(options: Pick<WebhookDedupeTableOptions, 'table'> = {}): string {
  const table = webhookTable(checkOptions(options, OPTIONS, 'webhookDedupeTableSql()').table);
  return `CREATE TABLE IF NOT EXISTS ${table.quoted} (
  post_id text NOT NULL,
  key text NOT NULL,
  claim_id text,
  newest double precision,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (post_id, key)
);
CREATE INDEX IF NOT EXISTS ${table.index} ON ${table.quoted} (expires_at);
`;
}

/**
 * Makes the webhook dedupe table if it does not exist yet (run it at start-up, from every process if you like: calls
 * made at once wait for each other; or run `webhookDedupeTableSql()` in a migration). Failures are
 * `WebhookDedupeUnavailableError`s (`operation: 'create'`).
 *
 * @example
 * await createWebhookDedupeTable(pool)
 */
export async function createWebhookDedupeTable(pool: PgPoolLike, options: WebhookDedupeTableOptions = {}): Promise<void> {
  const { table, statementTimeoutMs } = checkOptions(options, OPTIONS, 'createWebhookDedupeTable()');
  const timeoutMs = integerOption(statementTimeoutMs, 'statementTimeoutMs', 10_000, 1, MAX_TIMEOUT_MS);
  const sql = webhookDedupeTableSql(table === undefined ? {} : { table });
  // One simple query is one transaction: the lock is held until it ends, so two processes never race in the
  // catalog (a duplicate type or index error), and is freed with it, even when a statement fails.
  await pgConnection(checkPool(pool), webhookTable(table).name, timeoutMs).run('create', serialized(sql));
}

/** A connection whose failures are `WebhookDedupeUnavailableError`s, with a hint when the table is missing. */
export function pgConnection(pool: PgPoolLike, table: string, timeoutMs: number): PgConnection<WebhookDedupeOperation> {
  return new PgConnection<WebhookDedupeOperation>(pool, { key: '', table }, timeoutMs, (operation, detail) => {
    const hint =
      detail.sqlState === '42P01'
        ? `Create the table ${table} first: \`await createWebhookDedupeTable(pool, { table })\`, or run \`webhookDedupeTableSql()\` in a migration.`
        : undefined;
    return new WebhookDedupeUnavailableError(operation, { ...detail, store: 'postgres', ...(hint && { hint }) });
  });
}

const ms = (n: number) => `now() + $${n}::float8 * interval '1 millisecond'`;

/** The statements of one table (`table`: quoted). `$1` is the post's id, `$2` the event's key ('' its post's row). */
export function webhookStatements(table: string) {
  // A claim is taken when the row is new, expired, or holds this claim id (a renewal); otherwise left as it is.
  const taken = `e.expires_at <= now() OR e.claim_id = excluded.claim_id`;
  return {
    /**
     * $3 claim id, $4 ttl ms, $5 created_at (ms) or NULL. One row, its state as the row now is (it is locked by the
     * statement, so two claims never both see it new): done (no claim id), in-flight (another's), stale or new.
     */
    claim: `INSERT INTO ${table} AS e (post_id, key, claim_id, expires_at) VALUES ($1, $2, $3, ${ms(4)})
      ON CONFLICT (post_id, key) DO UPDATE SET
        claim_id = CASE WHEN ${taken} THEN excluded.claim_id ELSE e.claim_id END,
        expires_at = CASE WHEN ${taken} THEN excluded.expires_at ELSE e.expires_at END
      RETURNING CASE
        WHEN e.claim_id IS NULL THEN 'done'
        WHEN e.claim_id <> $3 THEN 'in-flight'
        WHEN (SELECT n.newest FROM ${table} n WHERE n.post_id = $1 AND n.key = '' AND n.expires_at > now()) > $5::float8 THEN 'stale'
        ELSE 'new' END AS state`,
    /** $3 done ttl ms, $4 created_at (ms) or NULL: the event done, whoever held it, and its post's newest moved up. */
    complete: `WITH done AS (
        INSERT INTO ${table} AS e (post_id, key, claim_id, expires_at) VALUES ($1, $2, NULL, ${ms(3)})
        ON CONFLICT (post_id, key) DO UPDATE SET claim_id = NULL, expires_at = excluded.expires_at
      )
      INSERT INTO ${table} AS n (post_id, key, newest, expires_at) SELECT $1, '', $4::float8, ${ms(3)} WHERE $4::float8 IS NOT NULL
      ON CONFLICT (post_id, key) DO UPDATE SET newest = excluded.newest, expires_at = excluded.expires_at
      WHERE n.newest IS NULL OR n.newest < excluded.newest OR n.expires_at <= now()`,
    /** $3 claim id: the claim given back only while it is still that one. */
    release: `DELETE FROM ${table} WHERE post_id = $1 AND key = $2 AND claim_id = $3`,
    /** $1 the most rows: expired rows deleted, oldest first, skipping rows another statement holds. */
    cleanup: `DELETE FROM ${table} WHERE (post_id, key) IN (
        SELECT post_id, key FROM ${table} WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
      ) AND expires_at <= now()`,
  };
}

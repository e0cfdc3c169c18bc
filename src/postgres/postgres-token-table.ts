/**
 * `PostgresTokenTable`: the token table as one object: it makes each user's `PostgresTokenStore` (the shared options
 * given once), lists the grants from the table's columns, and claims the due grants of the sweep
 * (`UserClients.keepGrantsAlive`) with `FOR UPDATE SKIP LOCKED`.
 */
import type { ReauthorizationReason } from '../oauth/errors.js';
import { randomUUID } from 'node:crypto';
import { constructorOptions, integerOption, MAX_TIMEOUT_MS, optionNames } from '../core/invalid-option.js';
import { type GrantClaims, type GrantPage, type GrantsOptions, grantsOptions, type KeepAlive, type KeepGrantsAliveOptions, type KeepGrantsAliveResult, SNAPSHOT, sweepGrants, sweepOptions, type TokenSpace } from '../store/grant-space.js';
import { lockTimes } from '../store/lease-lock.js';
import { storeCipher } from '../store/token-cipher.js';
import { checkPool, PgConnection } from './pg-connection.js';
import { DEFAULT_STATEMENT_TIMEOUT_MS, PostgresTokenStore, type PostgresTokenStoreOptions } from './postgres-token-store.js';
import { statements, tableName } from './token-table.js';

/** Options of `new PostgresTokenTable(...)`: those of `PostgresTokenStore` but `key`, shared by every user's store. */
export type PostgresTokenTableOptions = Omit<PostgresTokenStoreOptions, 'key'>;

const OPTIONS = /* @__PURE__ */ optionNames<PostgresTokenTableOptions>({ pool: 0, table: 0, encryptionKey: 0, lockTtlMs: 0, lockWaitMs: 0, statementTimeoutMs: 0 });

/**
 * A PostgreSQL token table as one object: `store(userId)` is the user's `PostgresTokenStore` (the row keyed by the
 * user's id), `grants()` pages through the grants (those that need reconnecting: `needs_reconnect_*` columns), and
 * `UserClients` takes it as its `store`, which enables `users.keepGrantsAlive()`. The table needs the indexes of
 * `createTokenTable` / `tokenTableSql()` (on `refreshed_at`, and a partial one on the marked rows): run it again on a
 * table made before, it adds them.
 *
 * @example
 * const table = new PostgresTokenTable({ pool, encryptionKey: process.env.TOKEN_ENCRYPTION_KEY })
 * const users = new UserClients({ oauth, baseUrl, store: table })
 * const { grants, next } = await table.grants({ status: 'needs_reconnect', limit: 100 })
 */
export class PostgresTokenTable implements TokenSpace {
  readonly #options: PostgresTokenTableOptions;
  readonly #table: ReturnType<typeof tableName>;
  readonly #connection: PgConnection;
  readonly #lockTtlMs: number;
  readonly #sql: ReturnType<typeof makeStatements>;

  constructor(options: PostgresTokenTableOptions) {
    options = constructorOptions(options, OPTIONS, 'new PostgresTokenTable()', '{ pool, encryptionKey }');
    // What every store would refuse, refused once here.
    const pool = checkPool(options.pool);
    this.#table = tableName(options.table);
    this.#sql = makeStatements(this.#table.quoted);
    storeCipher(options.encryptionKey);
    this.#lockTtlMs = lockTimes(options).ttlMs;
    this.#options = options;
    const timeoutMs = integerOption(options.statementTimeoutMs, 'statementTimeoutMs', DEFAULT_STATEMENT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
    this.#connection = new PgConnection(pool, { key: '(every user)', table: this.#table.name }, timeoutMs);
  }

  /** The user's store: the row keyed by `userId`. */
  store(userId: string): PostgresTokenStore {
    return new PostgresTokenStore({ ...this.#options, key: userId });
  }

  /**
   * A page of the table's grants (rows holding tokens), in key order: `status: 'needs_reconnect'` for a "reconnect
   * your account" page or e-mail. Keyset paging: pass `next` as `after`; each grant is listed once across the pages.
   * One statement per page.
   *
   * @example
   * for (let page = await table.grants({ status: 'needs_reconnect' }); ; page = await table.grants({ status: 'needs_reconnect', after: page.next })) {
   *   for (const grant of page.grants) await mailReconnectLink(grant.userId, grant.reason)
   *   if (page.next === undefined) break
   * }
   */
  async grants(options?: GrantsOptions): Promise<GrantPage> {
    const { status, limit, after } = grantsOptions(options);
    const sql = this.#sql;
    const text = status === undefined ? sql.grants : status === 'connected' ? sql.grantsConnected : sql.grantsNeedsReconnect;
    const rows = await this.#connection.rows('get', text, [after, limit]);
    const grants = rows.map((row) => {
      const reason = row['reason'];
      const refreshed = row['refreshed'];
      return {
        userId: String(row['key']),
        ...(typeof reason === 'string' ? { status: 'needs_reconnect' as const, reason: reason as ReauthorizationReason, since: Number(row['since']) } : { status: 'connected' as const }),
        ...(refreshed === null || refreshed === undefined ? {} : { refreshedAt: Number(refreshed) }),
      };
    });
    return rows.length < limit ? { grants } : { grants, next: grants[grants.length - 1]!.userId };
  }

  /**
   * @internal The sweep: reads the due rows (a snapshot), claims them as refreshes end (one statement per batch,
   * `FOR UPDATE SKIP LOCKED`, each row's lease taken as the claim), reads each one's tokens under the claim, frees the claim and hands the tokens to `keepAlive`,
   * whose refresh takes the row's lock again as every refresh does. A process that claims the row between the two
   * reads the same tokens and finds them replaced inside the lock: one refresh.
   */
  async sweep(keepAlive: KeepAlive, options: KeepGrantsAliveOptions): Promise<KeepGrantsAliveResult> {
    const { windowMs, concurrency, signal } = sweepOptions(options);
    const sql = this.#sql;
    const owner = `sweep:${randomUUID()}`;
    const claims: GrantClaims = {
      due: async () => (await this.#connection.rows('get', sql.due, [windowMs, SNAPSHOT])).map((row) => String(row['key'])),
      claim: async (userIds) => (await this.#connection.rows('lock', sql.claim, [windowMs, userIds, owner, this.#lockTtlMs])).map((row) => String(row['key'])),
      read: async (userId) => {
        // Unreadable (or the store down): the claim is kept until it expires (`lockTtlMs`), so other sweeps pass by.
        const tokens = await this.store(userId).get();
        await this.#connection.count('unlock', sql.release, [userId, owner]);
        return tokens;
      },
    };
    return sweepGrants(claims, keepAlive, { concurrency, signal });
  }

  /** What `JSON.stringify` shows: the table; never a token or a key. */
  toJSON(): {
    /** The table. */
    table: string;
  } {
    return { table: this.#table.name };
  }
}

/** The database's clock in epoch ms, for `DUE`. */
const CLOCK = 'clock AS (SELECT floor(extract(epoch FROM now()) * 1000)::bigint AS ms)';

/**
 * A row `t` holds a grant due in the window of $1 ms: not marked, and its slot (the first 32 bits of the MD5 of its
 * key, modulo the window) passed last after `refreshed_at`.
 */
const DUE = `t.tokens IS NOT NULL AND t.needs_reconnect_reason IS NULL
  AND COALESCE(floor(extract(epoch FROM t.refreshed_at) * 1000)::bigint, 0)
    < clock.ms - (clock.ms - ('x' || substr(md5(t.key), 1, 8))::bit(32)::bigint % $1::bigint) % $1::bigint`;

/** The table object's statements (`grants`, the sweep): made once per object. */
function makeStatements(table: string) {
  return {
    /**
     * The sweep's snapshot (`keepGrantsAlive`): up to $2 keys whose grant is due in the window of $1 ms, not marked,
     * the longest unrefreshed first (the `refreshed_at` index).
     */
    due: `WITH ${CLOCK} SELECT t.key FROM ${table} AS t, clock WHERE ${DUE} ORDER BY t.refreshed_at NULLS FIRST LIMIT $2`,
    /**
     * The sweep's claim: those of the keys $2 still due in the window of $1 ms and not locked, taken as the row's
     * lease by $3 for $4 ms. `SKIP LOCKED`: processes claiming at once get different rows.
     */
    claim: `WITH ${CLOCK}, due AS (SELECT t.key FROM ${table} AS t, clock
        WHERE t.key = ANY($2::text[]) AND ${DUE} AND (t.lock_owner IS NULL OR t.lock_expires_at <= now()) FOR UPDATE OF t SKIP LOCKED)
      UPDATE ${table} AS t SET lock_owner = $3, lock_expires_at = now() + $4::integer * interval '1 millisecond'
      FROM due WHERE t.key = due.key RETURNING t.key`,
    /** Pages of `grants()` (every grant, the connected ones, those to reconnect): rows with tokens after key $1, at most $2. */
    grants: grantsPage(table, ''),
    grantsConnected: grantsPage(table, 'AND needs_reconnect_reason IS NULL'),
    grantsNeedsReconnect: grantsPage(table, 'AND needs_reconnect_reason IS NOT NULL'),
    /** $1 key, $2 owner: frees the sweep's claim. */
    release: statements(table).release,
  };
}

/** A page of `grants()`, `where` narrowing it (the partial index serves `needs_reconnect_reason IS NOT NULL`). */
function grantsPage(table: string, where: string): string {
  return `SELECT key, needs_reconnect_reason AS reason, floor(extract(epoch FROM needs_reconnect_since) * 1000) AS since,
      floor(extract(epoch FROM refreshed_at) * 1000) AS refreshed
    FROM ${table} WHERE key > $1 AND tokens IS NOT NULL ${where} ORDER BY key LIMIT $2`;
}

/**
 * `PostgresWebhookDedupe`: the dedupe store of `createWebhookHandler` for a fleet of receivers sharing one PostgreSQL
 * database, with the guarantees of `RedisWebhookDedupe`. Each transition is one atomic statement (claim an
 * `INSERT … ON CONFLICT` that locks the row, complete likewise, release a compare-and-delete by claim id), so two
 * receivers can never both take an event, and a receiver whose claim expired can never give back one taken since.
 * Expired rows are ignored at once and deleted by a bounded clean-up that the store's own calls start.
 */
import { constructorOptions, integerOption, MAX_TIMEOUT_MS, optionNames, refusal } from '../core/invalid-option.js';
import { checkWellFormedId } from '../core/well-formed-id.js';
import type { WebhookDedupeOperation } from '../store/webhook-dedupe-error.js';
import type { WebhookClaim, WebhookClaimContext, WebhookDedupeStore } from '../webhooks/dedupe.js';
import { checkPool, type PgConnection, type PgPoolLike } from './pg-connection.js';
import { pgConnection, webhookStatements, webhookTable } from './webhook-dedupe-table.js';

/** Options of `new PostgresWebhookDedupe(...)`. */
export interface PostgresWebhookDedupeOptions {
  /**
   * A node-postgres `Pool` (`new Pool({ connectionString })`), as given to `PostgresTokenStore`. Listen to its
   * `error` event (`pool.on('error', …)`), or a restart of the server crashes the process (node-postgres's rule).
   */
  pool: PgPoolLike;
  /** The table made by `createWebhookDedupeTable` (or your migration of `webhookDedupeTableSql()`). Default `postsched_webhook_events`. */
  table?: string;
  /**
   * How long a handled event is remembered, in ms: a duplicate delivered later runs its handler again. Keep it
   * longer than the service retries (not shown by the spec). Default 7 days. Also how long a post's newest handled
   * `created_at` is kept after it last moved.
   */
  doneTtlMs?: number;
  /**
   * Time bound of each statement, the wait for a free connection of the pool included, in ms; past it a
   * `WebhookDedupeUnavailableError` (`postgres_timeout`). Default 3 000.
   */
  statementTimeoutMs?: number;
}

const OPTIONS = /* @__PURE__ */ optionNames<PostgresWebhookDedupeOptions>({ pool: 0, table: 0, doneTtlMs: 0, statementTimeoutMs: 0 });

const DEFAULT_DONE_TTL_MS = 7 * 86_400_000;
/** 100 years: later than that, `now() + ttl` would leave PostgreSQL's timestamp range. */
const MAX_TTL_MS = 100 * 365 * 86_400_000;
const DEFAULT_STATEMENT_TIMEOUT_MS = 3_000;
/** Expired rows deleted by one clean-up statement: a short statement, whatever the backlog. */
const CLEANUP_ROWS = 1_000;
/** A clean-up runs at most this often per store, unless the last one found a full batch (a backlog: go on). */
const CLEANUP_EVERY_MS = 60_000;

/**
 * The `dedupe` store of `createWebhookHandler` for several processes or instances whose shared store is PostgreSQL:
 * each event's handler succeeds once across the fleet, as with `RedisWebhookDedupe` (the same states, expiries
 * and per-post order). An in-flight duplicate is answered 503, never 2xx; a failed run is given back, so its retry
 * runs it; a claim whose holder died, or hangs, expires after `inFlightTtlMs`; a done mark after `doneTtlMs`.
 *
 * @example
 * import { Pool } from 'pg'
 * import { createWebhookHandler } from '@postsched/sdk/webhooks'
 * import { PostgresWebhookDedupe, createWebhookDedupeTable } from '@postsched/sdk/postgres'
 *
 * const pool = new Pool({ connectionString: process.env.DATABASE_URL })
 * await createWebhookDedupeTable(pool)
 * const webhooks = createWebhookHandler({
 *   secret: process.env.POSTSCHED_WEBHOOK_SECRET!,
 *   dedupe: new PostgresWebhookDedupe({ pool }),
 *   on: { 'post.published': (event) => queue.add('published', { id: event.data.id }) },
 * })
 */
export class PostgresWebhookDedupe implements WebhookDedupeStore {
  readonly #connection: PgConnection<WebhookDedupeOperation>;
  readonly #sql: ReturnType<typeof webhookStatements>;
  readonly #doneTtlMs: number;
  /** When the next clean-up may start (ms); `Infinity` while one runs. */
  #nextCleanup = 0;

  constructor(options: PostgresWebhookDedupeOptions) {
    options = constructorOptions(options, OPTIONS, 'new PostgresWebhookDedupe()', '{ pool }');
    const pool = checkPool(options.pool);
    const table = webhookTable(options.table);
    this.#doneTtlMs = integerOption(options.doneTtlMs, 'doneTtlMs', DEFAULT_DONE_TTL_MS, 1, MAX_TTL_MS);
    const timeoutMs = integerOption(options.statementTimeoutMs, 'statementTimeoutMs', DEFAULT_STATEMENT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
    this.#connection = pgConnection(pool, table.name, timeoutMs);
    this.#sql = webhookStatements(table.quoted);
  }

  /**
   * Takes the event for `context.ttlMs` (again, when its claim holds `context.claimId`), or says it is in flight or
   * done; `stale` when its post moved past it.
   */
  async claim(key: string, context: WebhookClaimContext): Promise<WebhookClaim> {
    const [post, event] = checked(key, context);
    const ttlMs = Math.min(context.ttlMs, MAX_TTL_MS);
    const [row] = await this.#connection.rows('claim', this.#sql.claim, [post, event, context.claimId, ttlMs, context.createdAt ?? null]);
    const state = row?.['state'];
    return state === 'stale' ? { state: 'new', stale: true } : { state: state as WebhookClaim['state'] };
  }

  /** Marks the event done for `doneTtlMs` and moves its post's newest handled `created_at` up. */
  async complete(key: string, context: WebhookClaimContext): Promise<void> {
    const [post, event] = checked(key, context);
    await this.#connection.count('complete', this.#sql.complete, [post, event, this.#doneTtlMs, context.createdAt ?? null]);
    this.#cleanUp();
  }

  /** Gives the claim back if it still holds `context.claimId` (not one taken since, nor a done mark). */
  async release(key: string, context: WebhookClaimContext): Promise<void> {
    const [post, event] = checked(key, context);
    await this.#connection.count('release', this.#sql.release, [post, event, context.claimId]);
  }

  /**
   * Deletes expired rows, at most `CLEANUP_ROWS` per statement and one statement at a time, once a minute or at
   * once again while a backlog lasts. Started by `complete`, never awaited: a delivery waits for no clean-up, and a
   * failed one is tried again at the next.
   */
  #cleanUp(): void {
    if (Date.now() < this.#nextCleanup) return;
    this.#nextCleanup = Infinity;
    this.#connection.count('complete', this.#sql.cleanup, [CLEANUP_ROWS]).then(
      (deleted) => (this.#nextCleanup = deleted >= CLEANUP_ROWS ? 0 : Date.now() + CLEANUP_EVERY_MS),
      () => (this.#nextCleanup = Date.now() + CLEANUP_EVERY_MS),
    );
  }
}

/**
 * The row's post id and key: the context of `createWebhookHandler`, and a key other than '' (its post's row). Ids with
 * a lone surrogate are refused, as by every store (`checkWellFormedId`); the post id is kept as JSON, as it is in the
 * key: a NUL, which PostgreSQL's text refuses, escaped.
 */
function checked(key: string, context: WebhookClaimContext): [string, string] {
  if (typeof context?.postId !== 'string' || typeof context.claimId !== 'string') {
    throw refusal('PostgresWebhookDedupe needs the claim context of createWebhookHandler.', ['context']);
  }
  if (typeof key !== 'string' || key === '') throw refusal('PostgresWebhookDedupe needs a non-empty event key (webhookDedupeKey(event)).', ['key']);
  checkWellFormedId(key, 'key');
  checkWellFormedId(context.postId, 'postId', ['context', 'postId']);
  return [JSON.stringify(context.postId), key];
}

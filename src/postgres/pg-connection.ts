/**
 * The SDK's one use of node-postgres: `pool.query({ text, values })`, typed structurally so that `pg` is never
 * imported (an optional peer dependency). Every statement is bounded in time (`statementTimeoutMs`): the wait for a
 * free connection of the pool and the statement together, on the client's side (a timer), and the statement alone by
 * pg's own `query_timeout`, which gives the connection back (ended) to the pool. Every failure becomes a
 * `PostgresTokenStoreError` whose cause is a scrubbed copy of pg's error (never the error itself: it can hold the
 * statement and its values, the tokens).
 */
import type { TokenStoreOperation } from '../oauth/errors.js';
import { findCode, sanitizeCause, scrubStoreMessage } from '../core/scrub.js';
import { invalidOption } from '../core/invalid-option.js';
import { timeBound } from '../core/time-bound.js';
import { PostgresTokenStoreError } from './errors.js';

/**
 * A node-postgres `Pool` (`new Pool({ connectionString })`), or anything with its `query(config)`: only that is used.
 *
 * @example
 * import { Pool } from 'pg'
 * const pool: PgPoolLike = new Pool({ connectionString: process.env.DATABASE_URL })
 */
export interface PgPoolLike {
  /** node-postgres's `pool.query({ text, values, query_timeout })`. */
  query(config: { text: string; values?: unknown[]; query_timeout?: number }): Promise<PgResultLike>;
}

/** What the store reads of node-postgres's query result. */
export interface PgResultLike {
  /** The rows, as objects keyed by column name. */
  rows: unknown[];
  /** How many rows the statement wrote or returned. */
  rowCount: number | null;
}

/** Checks `pool`: a node-postgres pool; postgres.js (`postgres()`) is refused by name. */
export function checkPool(pool: unknown): PgPoolLike {
  if (typeof pool === 'function' && typeof (pool as { unsafe?: unknown }).unsafe === 'function') {
    invalidOption('pool', 'is a postgres.js client (the `postgres` package), which this store does not support: pass a node-postgres `Pool` (`npm install pg`; `new Pool({ connectionString })`).', ['pool']);
  }
  if (typeof pool !== 'object' || pool === null || typeof (pool as { query?: unknown }).query !== 'function') {
    invalidOption('pool', `must be a node-postgres Pool (\`new Pool({ connectionString })\` from the \`pg\` package); got ${pool === null ? 'null' : typeof pool}.`, ['pool']);
  }
  return pool as PgPoolLike;
}

/** What a store other than the token store makes of a failure (a time-out, or pg's error scrubbed): its own error. */
export type PgFailure<Operation extends string> = (operation: Operation, detail: { timeoutMs?: number; cause?: Error; sqlState?: string | undefined }) => Error;

/**
 * Runs statements for one row of one table, each bounded by `timeoutMs`. Failures are `PostgresTokenStoreError`s, or
 * what `fail` makes of them (the webhook dedupe's error).
 */
export class PgConnection<Operation extends string = TokenStoreOperation> {
  readonly #pool: PgPoolLike;
  readonly #where: { key: string; table: string };
  readonly #timeoutMs: number;
  readonly #fail: PgFailure<Operation> | undefined;

  constructor(pool: PgPoolLike, where: { key: string; table: string }, timeoutMs: number, fail?: PgFailure<Operation>) {
    this.#pool = pool;
    this.#where = where;
    this.#timeoutMs = timeoutMs;
    this.#fail = fail;
  }

  /** The rows of `text` run with `values`. */
  async rows(operation: Operation, text: string, values: unknown[]): Promise<Array<Record<string, unknown>>> {
    return (await this.#run(operation, text, values)).rows as Array<Record<string, unknown>>;
  }

  /** How many rows `text` wrote (or returned). */
  async count(operation: Operation, text: string, values: unknown[]): Promise<number> {
    return (await this.#run(operation, text, values)).rowCount ?? 0;
  }

  #run(operation: Operation, text: string, values: unknown[]): Promise<PgResultLike> {
    const where = { ...this.#where, operation: operation as TokenStoreOperation };
    const fail = this.#fail;
    // The pool may settle long after the time-out; the promise is settled once, later results are dropped.
    const statement = Promise.resolve()
      .then(() => this.#pool.query({ text, values, query_timeout: this.#timeoutMs }))
      .catch((error: unknown) => {
        throw fail === undefined ? unavailable(where, error) : fail(operation, scrubbed(error));
      });
    return timeBound(
      () => statement,
      this.#timeoutMs,
      () =>
        fail?.(operation, { timeoutMs: this.#timeoutMs }) ??
        new PostgresTokenStoreError(where, 'timeout', `PostgreSQL did not answer within ${this.#timeoutMs} ms (\`statementTimeoutMs\`); the statement may still land. Check the pool's free connections and the server.`),
    );
  }
}

/** pg's error as a scrubbed copy (name, message, code: never the statement's values) and its SQLSTATE. */
function scrubbed(error: unknown): { cause: Error; sqlState: string | undefined; code: string | undefined } {
  const cause = sanitizeCause(error, 0, [], scrubStoreMessage) ?? new Error(`the pg client failed with a non-Error value (${typeof error})`);
  const code = findCode(error);
  return { cause, code, sqlState: code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : undefined };
}

/** pg's error, as a `PostgresTokenStoreError` holding only a scrubbed copy (name, message, code). */
function unavailable(where: { key: string; table: string; operation: TokenStoreOperation }, error: unknown): PostgresTokenStoreError {
  const { cause, code, sqlState } = scrubbed(error);
  const hint = sqlState === '42P01' ? ' Create the table first: `await createTokenTable(pool, { table })`, or run `tokenTableSql()` in a migration.' : '';
  return new PostgresTokenStoreError(where, 'unavailable', `PostgreSQL failed (${cause.message}${code === undefined ? '' : `, ${code}`}).${hint}`, { sqlState, cause });
}

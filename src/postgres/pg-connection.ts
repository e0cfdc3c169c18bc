/**
 * The SDK's one use of node-postgres: `pool.query({ text, values })`, typed structurally so that `pg` is never
 * imported (an optional peer dependency). Every statement is bounded in time (`statementTimeoutMs`): the wait for a
 * free connection of the pool and the statement together, on the client's side (a timer), and the statement alone by
 * pg's own `query_timeout`, which gives the connection back (ended) to the pool. Every failure becomes a
 * `SharedTokenStoreError` whose cause is a scrubbed copy of pg's error (never the error itself: it can hold the
 * statement and its values, the tokens).
 */
import type { TokenStoreOperation } from '../oauth/errors.js';
import { findCode, sanitizeCause, scrubStoreMessage } from '../core/scrub.js';
import { invalidOption } from '../core/invalid-option.js';
import { timeBound } from '../core/time-bound.js';
import { SharedTokenStoreError, type SharedTokenStoreErrorCode, type StoredTokensProblem } from '../store/errors.js';

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
 * Runs statements for one row of one table, each bounded by `timeoutMs`. Failures are `SharedTokenStoreError`s, or
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
    return (await this.#result(operation, text, values)).rows as Array<Record<string, unknown>>;
  }

  /** How many rows `text` wrote (or returned). */
  async count(operation: Operation, text: string, values: unknown[]): Promise<number> {
    return (await this.#result(operation, text, values)).rowCount ?? 0;
  }

  /** Runs `text` (several statements: one implicit transaction), whatever it answers. */
  async run(operation: Operation, text: string): Promise<void> {
    await this.#run(operation, text, []);
  }

  /** The pool's answer, checked: a pool (or a wrapper of one) that answers anything else fails typed, not later. */
  async #result(operation: Operation, text: string, values: unknown[]): Promise<PgResultLike> {
    const result = (await this.#run(operation, text, values)) as Partial<PgResultLike> | null | undefined;
    const rowCount = result?.rowCount;
    if (!Array.isArray(result?.rows) || !(rowCount === null || rowCount === undefined || typeof rowCount === 'number')) {
      const shown = result === null || typeof result !== 'object' ? String(result) : `an object without a rows array`;
      const message = `the pool answered ${shown}, not a node-postgres result ({ rows, rowCount }); the statement may have landed. Pass a node-postgres Pool, or make the wrapper return pool.query()'s result.`;
      throw this.#fail?.(operation, { cause: new Error(message) }) ?? postgresFailure({ ...this.#where, operation: operation as TokenStoreOperation }, 'bad_result', message);
    }
    return result as PgResultLike;
  }

  #run(operation: Operation, text: string, values: unknown[]): Promise<unknown> {
    const where = { ...this.#where, operation: operation as TokenStoreOperation };
    const fail = this.#fail;
    // The pool may settle long after the time-out; the promise is settled once, later results are dropped.
    const statement = Promise.resolve()
      .then(() => this.#pool.query({ text, values, query_timeout: this.#timeoutMs }))
      .catch((error: unknown) => {
        throw fail === undefined ? postgresError(where, error) : fail(operation, scrubbed(error));
      });
    return timeBound(
      () => statement,
      this.#timeoutMs,
      () =>
        fail?.(operation, { timeoutMs: this.#timeoutMs }) ??
        postgresFailure(where, 'timeout', `PostgreSQL did not answer within ${this.#timeoutMs} ms (\`statementTimeoutMs\`); the statement may still land. Check the pool's free connections and the server.`, { timeoutMs: this.#timeoutMs }),
    );
  }
}

/** SQLSTATEs retrying cannot fix: data exceptions (22: 22021 a NUL in text), syntax or access (42, but 42P01: a
 * table a migration may still make), not supported (0A). */
const PERMANENT = /^(22|42(?!P01)|0A)/;

/** pg's error as a scrubbed copy (name, message, code: never the statement's values) and its SQLSTATE. */
function scrubbed(error: unknown): { cause: Error; sqlState: string | undefined; code: string | undefined } {
  const cause = sanitizeCause(error, 0, [], scrubStoreMessage) ?? new Error(`the pg client failed with a non-Error value (${typeof error})`);
  const code = findCode(error);
  return { cause, code, sqlState: code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : undefined };
}

/** Where a Postgres token store (or `createTokenTable`: `key` empty) failed. */
export interface PgSite {
  readonly key: string;
  readonly table: string;
  readonly operation: TokenStoreOperation;
}

/** The store's error: its message names the row's key, the table and the operation (or `createTokenTable`). */
export function postgresFailure(
  where: PgSite,
  code: SharedTokenStoreErrorCode,
  message: string,
  detail: { sqlState?: string | undefined; problem?: StoredTokensProblem; timeoutMs?: number; cause?: Error } = {},
): SharedTokenStoreError {
  const what = where.key === '' ? `createTokenTable (table ${where.table}) failed` : `Token store "${where.key}" (table ${where.table}) failed during ${where.operation}`;
  return new SharedTokenStoreError({ store: 'postgres', ...where }, code, `${what}: ${message}`, detail);
}

/** pg's error, as a `SharedTokenStoreError` holding only a scrubbed copy (name, message, code). */
export function postgresError(where: PgSite, error: unknown): SharedTokenStoreError {
  const { cause, code, sqlState } = scrubbed(error);
  return postgresFailure(
    where,
    sqlState !== undefined && PERMANENT.test(sqlState) ? 'refused' : 'unavailable',
    `PostgreSQL failed (${cause.message}${code === undefined ? '' : `, ${code}`}).${sqlState === '42P01' ? missingTable(where.table) : ''}`,
    { sqlState, cause },
  );
}

/** The hint of 42P01: make the table; or, for a name with capitals, the case PostgreSQL folded an unquoted name to. */
function missingTable(table: string): string {
  if (table === table.toLowerCase()) return ' Create the table first: `await createTokenTable(pool, { table })`, or run `tokenTableSql()` in a migration.';
  return (
    ` The store quotes \`table\`, so "${table}" names a table with exactly those capitals, while a migration that wrote it ` +
    `unquoted made "${table.toLowerCase()}" (PostgreSQL folds unquoted names to lower case). Pass \`table: '${table.toLowerCase()}'\`, ` +
    'or make the table with `createTokenTable(pool, { table })` / `tokenTableSql({ table })`, which quote it.'
  );
}

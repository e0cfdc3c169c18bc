/**
 * The one error class of `PostgresTokenStore`: a `TokenStoreError` (as every store failure is, so `TokenManager`
 * reports it as such) with a machine-readable `code`. No message carries a token, an encryption key, a lock owner
 * token or a statement's values: they name the table, the row's key and the operation.
 */
import { TokenStoreError, type TokenStoreOperation } from '../oauth/errors.js';
import type { StoredTokensProblem } from '../redis/errors.js';

/**
 * What went wrong:
 * - `unavailable`: PostgreSQL refused the connection, ended it (a restart, `pg_terminate_backend`) or answered with an
 *   error (`sqlState` says which); nothing was decided, retry later;
 * - `refused`: PostgreSQL refused the statement for good (`sqlState` says why: 22021 a value it cannot store, 42501
 *   no permission, 0A000 not supported); retrying will not help;
 * - `bad_result`: the pool answered something that is not a node-postgres result (`undefined`, `{}`, `{ rows: null }`);
 *   the statement may have landed;
 * - `timeout`: no answer within `statementTimeoutMs` (a pool with no free connection, a statement waiting for a lock,
 *   a server that does not answer); the statement may still land;
 * - `lock_timeout`: another process held the row's lock for longer than `lockWaitMs`;
 * - `lock_lost`: `set()` inside `lock()` ran after the lock had expired (`lockTtlMs`): nothing was written;
 * - `unreadable`: the stored value is not a token set this store can read (`problem` says why).
 */
export type PostgresTokenStoreErrorCode = 'unavailable' | 'refused' | 'bad_result' | 'timeout' | 'lock_timeout' | 'lock_lost' | 'unreadable';

/**
 * Every failure of `PostgresTokenStore`.
 *
 * @example
 * catch (err) {
 *   if (err instanceof PostgresTokenStoreError && err.code !== 'unreadable') return res.status(503).end()
 * }
 */
export class PostgresTokenStoreError extends TokenStoreError {
  /** @internal */
  static override readonly id: string = 'PostgresTokenStoreError';
  /** What went wrong. */
  readonly code: PostgresTokenStoreErrorCode;
  /** The row's key (a name chosen by the app, not a secret); empty for a failure of `createTokenTable`. */
  readonly key: string;
  /** The table. */
  readonly table: string;
  /** PostgreSQL's SQLSTATE when it answered with an error (`57P01`: the connection was terminated). */
  readonly sqlState: string | undefined;
  /** With `unreadable`: what is wrong with the stored value. */
  readonly problem: StoredTokensProblem | undefined;

  constructor(
    where: { key: string; table: string; operation: TokenStoreOperation },
    code: PostgresTokenStoreErrorCode,
    message: string,
    detail: { sqlState?: string | undefined; problem?: StoredTokensProblem; cause?: Error } = {},
  ) {
    const what = where.key === '' ? `createTokenTable (table ${where.table}) failed` : `Token store "${where.key}" (table ${where.table}) failed during ${where.operation}`;
    super(where.operation, undefined, [], `${what}: ${message}`, detail.cause === undefined ? undefined : { cause: detail.cause });
    this.code = code;
    this.key = where.key;
    this.table = where.table;
    this.sqlState = detail.sqlState;
    this.problem = detail.problem;
  }
}

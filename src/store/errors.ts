/**
 * The one error class of the shared token stores (`RedisTokenStore`, `PostgresTokenStore`): a `TokenStoreError` (as
 * every store failure is, so `TokenManager` reports it as such) with a machine-readable `code` meaning the same in
 * both stores, so one `catch` works with either. What is the store's own (the table, PostgreSQL's SQLSTATE) is in
 * fields. No message carries a token, an encryption key, a lock owner token or a statement's values: they name the
 * key (and table) and the operation.
 */
import { TokenStoreError, type TokenStoreOperation } from '../oauth/errors.js';

/**
 * What went wrong:
 * - `unavailable`: the store refused the connection, ended it (a restart) or answered with an error (PostgreSQL:
 *   `sqlState` says which); nothing was decided, retry later;
 * - `refused`: PostgreSQL refused the statement for good (`sqlState` says why: 22021 a value it cannot store, 42501
 *   no permission, 0A000 not supported); retrying will not help;
 * - `bad_result`: the pool answered something that is not a node-postgres result (`undefined`, `{}`, `{ rows: null }`);
 *   the statement may have landed;
 * - `timeout`: no answer within `commandTimeoutMs` (Redis) or `statementTimeoutMs` (PostgreSQL: a pool with no free
 *   connection, a statement waiting for a lock); the command may still land. `timeoutMs` says how long;
 * - `lock_timeout`: another process held the lock for longer than `lockWaitMs` (`timeoutMs`);
 * - `lock_lost`: `set()` inside `lock()` ran after the lock had expired (`lockTtlMs`): nothing was written;
 * - `unreadable`: the stored value is not a token set this store can read (`problem` says why);
 * - `cross_slot`: Redis Cluster refused the tokens' key and its lock key together (`CROSSSLOT`): put a hash tag in `key`;
 * - `cluster_client_required`: Redis answered `MOVED`: a single-node client is connected to a Redis Cluster; pass a
 *   Cluster client.
 *
 * Retry later on `unavailable`, `timeout` and `lock_timeout`; the others need a fix.
 */
export type SharedTokenStoreErrorCode =
  | 'unavailable'
  | 'refused'
  | 'bad_result'
  | 'timeout'
  | 'lock_timeout'
  | 'lock_lost'
  | 'unreadable'
  | 'cross_slot'
  | 'cluster_client_required';

/** Why stored tokens could not be read (`code: 'unreadable'`). */
export type StoredTokensProblem =
  | 'wrong_key_or_tampered'
  | 'missing_key'
  | 'not_encrypted'
  | 'unsupported_version'
  | 'malformed';

/** Where a shared store failed: which store, the key (and table) and the operation. */
export interface StoreFailureSite {
  /** Which store. */
  readonly store: 'redis' | 'postgres';
  /** The Redis key or the row's key. */
  readonly key: string;
  /** PostgreSQL: the table. */
  readonly table?: string | undefined;
  /** The store call that failed. */
  readonly operation: TokenStoreOperation;
}

/**
 * Every failure of `RedisTokenStore` and `PostgresTokenStore`: the same class and `code`s in both.
 *
 * @example
 * catch (err) {
 *   if (err instanceof SharedTokenStoreError && ['unavailable', 'timeout', 'lock_timeout'].includes(err.code)) return res.status(503).end()
 * }
 */
export class SharedTokenStoreError extends TokenStoreError {
  /** @internal */
  static override readonly id: string = 'SharedTokenStoreError';
  /** What went wrong. */
  readonly code: SharedTokenStoreErrorCode;
  /** Which store failed. */
  readonly store: 'redis' | 'postgres';
  /** The Redis key or the row's key (a name chosen by the app, not a secret); empty for a failure of `createTokenTable`. */
  readonly key: string;
  /** PostgreSQL: the table. */
  readonly table: string | undefined;
  /** PostgreSQL's SQLSTATE when it answered with an error (`57P01`: the connection was terminated). */
  readonly sqlState: string | undefined;
  /** With `unreadable`: what is wrong with the stored value. */
  readonly problem: StoredTokensProblem | undefined;
  /** With `timeout`: the command's bound (`commandTimeoutMs`, `statementTimeoutMs`); with `lock_timeout`: `lockWaitMs`. */
  readonly timeoutMs: number | undefined;

  constructor(
    where: StoreFailureSite,
    code: SharedTokenStoreErrorCode,
    message: string,
    detail: { sqlState?: string | undefined; problem?: StoredTokensProblem; timeoutMs?: number | undefined; cause?: Error } = {},
  ) {
    super(where.operation, undefined, [], message, detail.cause === undefined ? undefined : { cause: detail.cause });
    this.code = code;
    this.store = where.store;
    this.key = where.key;
    this.table = where.table;
    this.sqlState = detail.sqlState;
    this.problem = detail.problem;
    this.timeoutMs = detail.timeoutMs;
  }
}

/** The stored value under `where` cannot be read: `problem` says why, `detail` adds what was seen. */
export function unreadableTokens(where: StoreFailureSite, problem: StoredTokensProblem, detail?: string): SharedTokenStoreError {
  const prefix = where.table === undefined ? `The tokens stored under "${where.key}"` : `Token store "${where.key}" (table ${where.table}) failed during ${where.operation}: the stored tokens`;
  return new SharedTokenStoreError(where, 'unreadable', `${prefix} cannot be read: ${describe(problem, where.store)}${detail ? ` (${detail})` : ''}.`, { problem });
}

function describe(problem: StoredTokensProblem, store: 'redis' | 'postgres'): string {
  switch (problem) {
    case 'wrong_key_or_tampered':
      return 'decryption failed; the value was encrypted with another `encryptionKey`, changed, or copied from another key';
    case 'missing_key':
      return 'the value is encrypted; pass the `encryptionKey` it was written with';
    case 'not_encrypted':
      return (
        'the value is in clear while an `encryptionKey` was given. Moving from `encryptionKey: \'none\'` to a key? Add ' +
        '`allowPlaintext: true` to the keyring until `postsched rekey` finds no value in clear. Else a process without ' +
        'the key wrote it, or it was planted: sign the user in again'
      );
    case 'unsupported_version':
      return 'the value was written by a newer version of @postsched/sdk; upgrade this process';
    case 'malformed':
      return `the value is not a token set written by ${store === 'redis' ? 'RedisTokenStore' : 'PostgresTokenStore'}`;
  }
}

/**
 * What the cipher and the codec throw for a value they cannot read: the store that read it (`StoredTokens`) turns it
 * into its `SharedTokenStoreError` (`unreadableTokens`), which names the store, key and table.
 */
export class UnreadableValue extends Error {
  readonly problem: StoredTokensProblem;
  readonly detail: string | undefined;

  constructor(problem: StoredTokensProblem, detail?: string) {
    super(`stored tokens unreadable: ${problem}`);
    this.problem = problem;
    this.detail = detail;
  }
}

/**
 * Errors of `RedisTokenStore`. None of them carries a token, an encryption key or a lock owner token:
 * the messages name the Redis key and the operation, never a value. Each is a `TokenStoreError`, so a Redis outage
 * surfacing from `TokenManager.getAccessToken()` is caught as every other store failure is.
 */
import { TokenStoreError } from '../oauth/errors.js';

/** What the store was doing when it failed. */
export type RedisTokenStoreOperation = 'get' | 'set' | 'lock' | 'unlock';

/**
 * Base class of every error `RedisTokenStore` throws, so one `instanceof` check catches them all; a
 * `TokenStoreError` like every store failure.
 *
 * @example
 * catch (err) { if (err instanceof RedisTokenStoreError) console.error(err.name, err.key, err.operation) }
 */
export class RedisTokenStoreError extends TokenStoreError {
  /** @internal */
  static override readonly id: string = 'RedisTokenStoreError';
  /** The store operation that failed. */
  declare readonly operation: RedisTokenStoreOperation;
  /** The Redis key of the token set (a name chosen by the app, not a secret). */
  readonly key: string;

  constructor(key: string, message: string, options?: { cause?: unknown }, operation: RedisTokenStoreOperation = 'get') {
    super(operation, undefined, [], message, options);
    this.key = key;
  }
}

/**
 * Redis did not answer in time (`commandTimeoutMs`), refused the connection, or answered with an error.
 * Nothing was decided: retry later. `cause`, when present, is a plain `Error` holding only the client
 * library's error name, code and message (never the library's error itself: ioredis attaches the command's
 * arguments, which hold the tokens).
 *
 * @example
 * catch (err) { if (err instanceof TokenStoreUnavailableError) return res.status(503).end() }
 */
export class TokenStoreUnavailableError extends RedisTokenStoreError {
  /** @internal */
  static override readonly id: string = 'TokenStoreUnavailableError';
  /** Set when the command was cut off by `commandTimeoutMs`. */
  readonly timeoutMs: number | undefined;

  constructor(
    key: string,
    operation: RedisTokenStoreOperation,
    detail: { timeoutMs?: number; cause?: Error; message?: string },
  ) {
    const what =
      detail.message ??
      (detail.timeoutMs !== undefined
        ? `Redis did not answer within ${detail.timeoutMs} ms`
        : `Redis failed${detail.cause === undefined ? '' : ` (${detail.cause.message})`}`);
    super(
      key,
      `Token store "${key}" is unavailable during ${operation}: ${what}. ` +
        'Check that Redis is reachable; raise `commandTimeoutMs` if it is known to be slow.',
      detail.cause === undefined ? undefined : { cause: detail.cause },
      operation,
    );
    this.timeoutMs = detail.timeoutMs;
  }
}

/**
 * Another process held the token lock for longer than `lockWaitMs`. Usually a holder that died without
 * releasing it while `lockTtlMs` is longer than `lockWaitMs`; retry later.
 */
export class LockTimeoutError extends TokenStoreUnavailableError {
  /** @internal */
  static override readonly id: string = 'LockTimeoutError';
  /** How long the store waited for the lock, in ms. */
  readonly waitedMs: number;

  constructor(key: string, waitedMs: number) {
    super(key, 'lock', {
      message:
        `another process held the token lock for more than ${waitedMs} ms (\`lockWaitMs\`). ` +
        'If a holder died, its lock expires after `lockTtlMs`; keep `lockWaitMs` longer than `lockTtlMs`',
    });
    this.waitedMs = waitedMs;
  }
}

/**
 * `set()` ran inside `lock()` after the lock had expired (`lockTtlMs`) and another process may already have
 * stored newer tokens: the write was refused so it cannot overwrite them. Read the store again.
 */
export class LockLostError extends RedisTokenStoreError {
  /** @internal */
  static override readonly id: string = 'LockLostError';

  constructor(key: string) {
    super(
      key,
      `The token lock of "${key}" expired before set() ran, so the tokens were not written (another process ` +
        'may hold newer ones). Raise `lockTtlMs` above the longest token refresh.',
      undefined,
      'set',
    );
  }
}

/**
 * Redis Cluster refused a command on the tokens' key and its lock key (`${key}:lock`) together because they hash to
 * different slots (`CROSSSLOT`). Not an outage, and retrying will not help: put a hash tag in `key`
 * (`postsched:tokens:{user_42}`) so that both keys share a slot. The message suggests the caller's own key with one.
 *
 * @example
 * catch (err) { if (err instanceof CrossSlotError) console.error(`fix the key: ${err.key}`) }
 */
export class CrossSlotError extends RedisTokenStoreError {
  /** @internal */
  static override readonly id: string = 'CrossSlotError';

  constructor(key: string) {
    super(
      key,
      `Redis Cluster refused a command on "${key}" and its lock key "${key}:lock": they hash to different slots ` +
        `(CROSSSLOT). Put a hash tag in \`key\` so both share a slot: "${withHashTag(key)}".`,
    );
  }
}

/**
 * Redis answered `MOVED`: the client is a single-node client (`new Redis(url)`, `createClient()`) connected to a
 * node of a Redis Cluster, which holds the key's slot elsewhere. Not an outage, and retrying will not help: pass a
 * Cluster client (ioredis `new Cluster(nodes)`, node-redis `createCluster(...)`).
 *
 * @example
 * catch (err) { if (err instanceof ClusterClientRequiredError) console.error('REDIS_URL points at a cluster') }
 */
export class ClusterClientRequiredError extends RedisTokenStoreError {
  /** @internal */
  static override readonly id: string = 'ClusterClientRequiredError';

  constructor(key: string, operation: RedisTokenStoreOperation) {
    super(
      key,
      `Redis answered MOVED for "${key}": the \`redis\` client is a single-node client connected to a Redis Cluster. ` +
        'Pass a Cluster client instead: ioredis `new Cluster(nodes)` or node-redis `createCluster({ rootNodes })`.',
      undefined,
      operation,
    );
  }
}

/**
 * `key` with a hash tag, as the cluster messages suggest it: its last `:`-separated part in braces
 * (`postsched:tokens:user_42` → `postsched:tokens:{user_42}`), or the whole key when that part is empty.
 */
export function withHashTag(key: string): string {
  const cut = key.lastIndexOf(':', key.length - 2) + 1;
  return `${key.slice(0, cut)}{${key.slice(cut)}}`;
}

/** Why stored tokens could not be read. */
export type StoredTokensProblem =
  | 'wrong_key_or_tampered'
  | 'missing_key'
  | 'not_encrypted'
  | 'unsupported_version'
  | 'malformed';

/**
 * The value under the key is not a token set this store can read: encrypted with another key (or changed, or
 * copied from another Redis key), encrypted while no `encryptionKey` was given, stored in clear while one
 * was given, or not a token set at all. `problem` says which.
 */
export class StoredTokensUnreadableError extends RedisTokenStoreError {
  /** @internal */
  static override readonly id: string = 'StoredTokensUnreadableError';
  /** What is wrong with the stored value. */
  readonly problem: StoredTokensProblem;

  constructor(key: string, problem: StoredTokensProblem, detail?: string) {
    super(key, `The tokens stored under "${key}" cannot be read: ${describe(problem)}${detail ? ` (${detail})` : ''}.`);
    this.problem = problem;
  }

  /** The machine-readable field under the name every SDK error uses for it: the same value as `problem`. */
  get code(): StoredTokensProblem {
    return this.problem;
  }
}

function describe(problem: StoredTokensProblem): string {
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
      return 'the value is not a token set written by RedisTokenStore';
  }
}

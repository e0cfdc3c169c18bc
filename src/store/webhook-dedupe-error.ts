/**
 * The error of `RedisWebhookDedupe` and `PostgresWebhookDedupe`: the store failed or did not answer. It names the
 * store and the step, never a key's value or a claim id.
 */
import { PostSchedError } from '../core/base-error.js';

/** Which call of the store failed (`create`: `createWebhookDedupeTable`). */
export type WebhookDedupeOperation = 'claim' | 'complete' | 'release' | 'create';

/**
 * The store did not answer in time (`redis_timeout`: `commandTimeoutMs`; `postgres_timeout`: `statementTimeoutMs`),
 * refused the connection or answered with an error (`redis_error`, `postgres_error`: a restart, a terminated
 * backend, a missing table). `createWebhookHandler` then answers 500 (the service retries) and hands this to
 * `onError`. `cause`, when present, holds only the client library's error name, code and message.
 *
 * @example
 * onError: (error) => { if (error instanceof WebhookDedupeUnavailableError) metrics.increment(error.code) }
 */
export class WebhookDedupeUnavailableError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'WebhookDedupeUnavailableError';
  /** What failed: `redis_timeout`, `redis_error`, `postgres_timeout` or `postgres_error`. */
  readonly code: 'redis_timeout' | 'redis_error' | 'postgres_timeout' | 'postgres_error';
  /** The store call that failed. */
  readonly operation: WebhookDedupeOperation;
  /** Set when the call was cut off by its time bound. */
  readonly timeoutMs: number | undefined;
  /** PostgreSQL's SQLSTATE when it answered with an error (`57P01`: the connection was terminated). */
  readonly sqlState: string | undefined;

  constructor(
    operation: WebhookDedupeOperation,
    detail: { timeoutMs?: number; cause?: Error; store?: 'redis' | 'postgres'; sqlState?: string | undefined; hint?: string },
  ) {
    const postgres = detail.store === 'postgres';
    const [name, option] = postgres ? ['PostgreSQL', 'statementTimeoutMs'] : ['Redis', 'commandTimeoutMs'];
    const what =
      detail.timeoutMs !== undefined
        ? `${name} did not answer within ${detail.timeoutMs} ms (${option})`
        : `${name} failed${detail.cause === undefined ? '' : ` (${detail.cause.message})`}`;
    super(
      `${postgres ? 'Postgres' : 'Redis'}WebhookDedupe could not ${operation === 'create' ? 'create its table' : `${operation} a webhook event`}: ${what}. ` +
        (detail.hint ?? `Check that ${name} is reachable; raise \`${option}\` if it is known to be slow.`),
      detail.cause === undefined ? undefined : { cause: detail.cause },
    );
    this.code = `${postgres ? 'postgres' : 'redis'}_${detail.timeoutMs === undefined ? 'error' : 'timeout'}`;
    this.operation = operation;
    this.timeoutMs = detail.timeoutMs;
    this.sqlState = detail.sqlState;
  }
}

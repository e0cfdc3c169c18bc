/** The error of `RedisWebhookDedupe`: Redis failed or did not answer. It names the step, never a key's value. */
import { PostSchedError } from '../core/base-error.js';

/** Which call of the store failed. */
export type RedisWebhookDedupeOperation = 'claim' | 'complete' | 'release';

/**
 * Redis did not answer within `commandTimeoutMs` (`code: 'redis_timeout'`), refused the connection or answered
 * with an error (`code: 'redis_error'`). `createWebhookHandler` then answers 500 (the service retries) and hands
 * this to `onError`. `cause`, when present, holds only the client library's error name, code and message.
 *
 * @example
 * onError: (error) => { if (error instanceof WebhookDedupeUnavailableError) metrics.increment(error.code) }
 */
export class WebhookDedupeUnavailableError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'WebhookDedupeUnavailableError';
  /** `redis_timeout` or `redis_error`. */
  readonly code: 'redis_timeout' | 'redis_error';
  /** The store call that failed. */
  readonly operation: RedisWebhookDedupeOperation;
  /** Set when the command was cut off by `commandTimeoutMs`. */
  readonly timeoutMs: number | undefined;

  constructor(operation: RedisWebhookDedupeOperation, detail: { timeoutMs?: number; cause?: Error }) {
    const what =
      detail.timeoutMs !== undefined
        ? `Redis did not answer within ${detail.timeoutMs} ms (commandTimeoutMs)`
        : `Redis failed${detail.cause === undefined ? '' : ` (${detail.cause.message})`}`;
    super(
      `RedisWebhookDedupe could not ${operation} a webhook event: ${what}. Check that Redis is reachable; raise ` +
        '`commandTimeoutMs` if it is known to be slow.',
      detail.cause === undefined ? undefined : { cause: detail.cause },
    );
    this.code = detail.timeoutMs === undefined ? 'redis_error' : 'redis_timeout';
    this.operation = operation;
    this.timeoutMs = detail.timeoutMs;
  }
}

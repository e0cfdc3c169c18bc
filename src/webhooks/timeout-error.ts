/** The error `createWebhookHandler` gives `onError` when a handler or a dedupe store overran its time bound. */
import { PostSchedError } from '../base-error.js';

/**
 * What overran. Stable, machine-readable: switch on it, log it, count it.
 * - `handler_timeout`: the event's handler ran past `handlerTimeoutMs`; the answer was 500 and the handler's
 *   `signal` was aborted. The event stays claimed until the handler settles (retries get 503): then it is done, or
 *   given back when the handler failed, so the service's retry runs it again.
 * - `dedupe_timeout`: a call to the dedupe store (`operation`) got no answer within `dedupeTimeoutMs`.
 */
export type WebhookTimeoutReason = 'handler_timeout' | 'dedupe_timeout';

/** Which step overran: the handler, or one of the dedupe store's calls. */
export type WebhookTimedStep = 'handler' | 'claim' | 'complete' | 'release';

/**
 * A step of handling a verified delivery got no result in time. The answer was 500 (or, when only `complete` was
 * late after the handler finished, 204), so nothing was lost: the service retries.
 *
 * @example
 * onError: (error, { status }) => {
 *   if (error instanceof WebhookTimeoutError) metrics.increment(`webhooks.${error.reason}`, { step: error.step })
 * }
 */
export class WebhookTimeoutError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'WebhookTimeoutError';
  /** `handler_timeout` or `dedupe_timeout`. */
  readonly reason: WebhookTimeoutReason;
  /** Same as `reason`, for code that reads `error.code`. */
  readonly code: WebhookTimeoutReason;
  /** The step that overran. */
  readonly step: WebhookTimedStep;
  /** The bound it overran, in ms. */
  readonly timeoutMs: number;

  constructor(step: WebhookTimedStep, timeoutMs: number) {
    const handler = step === 'handler';
    super(
      `${handler ? 'The webhook handler' : `The dedupe store's ${step}()`} took over ${timeoutMs} ms ` +
        (handler
          ? '(handlerTimeoutMs): answered 500; the event stays claimed until it settles. Enqueue slow work and return.'
          : '(dedupeTimeoutMs). Is the store reachable?'),
    );
    this.reason = handler ? 'handler_timeout' : 'dedupe_timeout';
    this.code = this.reason;
    this.step = step;
    this.timeoutMs = timeoutMs;
  }
}

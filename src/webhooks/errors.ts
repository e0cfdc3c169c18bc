/**
 * The webhook errors: `WebhookVerificationError`, the one error every rejected delivery throws, and
 * `WebhookTimeoutError`, what `createWebhookHandler` gives `onError` when a handler or a dedupe store overran its
 * time bound.
 */
import { PostSchedError } from '../core/base-error.js';

/**
 * Why a delivery was rejected. Stable, machine-readable: switch on it, log it, count it.
 * - `missing_signature`: no `X-Service-Signature` header.
 * - `malformed_signature`: the header is not `t=<seconds>,v1=<64 lowercase hex>` (or is over 4 KiB).
 * - `timestamp_too_old` / `timestamp_in_future`: outside `toleranceSeconds` (a replay, or a wrong clock).
 * - `no_matching_signature`: wrong secret, or the body is not the exact bytes that were signed.
 * - `body_not_raw`: the body was parsed, already read or is missing; pass the raw body.
 * - `body_too_large`: the body is over `maxBodyBytes` (1 MiB by default); the rest of it was not read.
 * - `invalid_secret`: the secret is missing, empty or padded with whitespace.
 * - `invalid_json` / `invalid_event`: signed correctly, but not JSON / not an event envelope.
 */
export type WebhookVerificationReason =
  | 'missing_signature'
  | 'malformed_signature'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'no_matching_signature'
  | 'body_not_raw'
  | 'body_too_large'
  | 'invalid_secret'
  | 'invalid_json'
  | 'invalid_event';

/**
 * A webhook delivery failed verification. Answer 400 and do not act on it. The message says what to fix;
 * it never contains the secret.
 *
 * @example
 * try { event = await verifyWebhook({ body, signature, secret }) } catch (err) {
 *   if (err instanceof WebhookVerificationError) return res.status(400).send(err.reason)
 *   throw err
 * }
 */
export class WebhookVerificationError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'WebhookVerificationError';
  /** Which check failed, as a machine-readable code (safe to log or to answer with). */
  declare readonly reason: WebhookVerificationReason; // set by the constructor (`declare`: no field initializer emitted)

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }

  /** The machine-readable field under the name every SDK error uses for it: the same value as `reason`. */
  get code(): WebhookVerificationReason {
    return this.reason;
  }
}

/** Throws a `WebhookVerificationError`; a function so call sites stay one line. */
export function reject(reason: WebhookVerificationReason, message: string): never {
  throw new WebhookVerificationError(reason, message);
}

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

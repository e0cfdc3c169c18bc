/** The one error every webhook rejection throws. */
import { PostSchedError } from '../base-error.js';

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
  readonly reason: WebhookVerificationReason;

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

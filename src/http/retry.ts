/**
 * The retry rules ("Retries of writes" and "Rate limits" in the README's Assumptions table): for a failed attempt,
 * whether the call is sent again and after how long. ky runs the loop (request.ts: its `shouldRetry` asks here, its
 * `delay` gives the wait decided here); this file only decides:
 * - POST and PATCH are never re-sent unless the call has an idempotency key, the answer was 429, or the
 *   connection failed before the request could leave;
 * - how long to wait: the service's `Retry-After` / `RateLimit-Reset` when usable (to the millisecond), else
 *   exponential backoff with jitter;
 * - a wait beyond `maxRetryAfterMs` ends the retries with an error carrying the wait;
 * - a body that cannot be replayed (a stream) is never re-sent.
 */
import { ConnectionError, TimeoutError } from '../core/errors.js';
import { parseRateLimit, waitMsOf } from '../core/rate-limit.js';
import { requestNeverLeft } from '../core/scrub.js';

/** What the decision needs to know about one call. */
export interface RetryRules {
  method: string;
  /** The call carries `Idempotency-Key`: the service replays its stored answer instead of acting twice. */
  hasIdempotencyKey: boolean;
  /** False for a streamed upload: its bytes are gone once sent. */
  bodyReplayable: boolean;
  /** Longest `Retry-After` / `RateLimit-Reset` wait honoured, in ms (default 60 000). */
  maxRetryAfterMs: number;
  /** Retries after the first attempt (default 2). */
  maxRetries: number;
}

/** RFC 9110 §9.2.2: methods whose repetition has the same effect as one request. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']);
export const RETRY_STATUS_CODES = [408, 429, 500, 502, 503, 504];
/** RFC 6585 §4 (429) and RFC 9110 §10.2.3 (503) define `Retry-After` on these answers. */
const RETRY_AFTER_STATUS_CODES = [429, 503];
const BACKOFF_LIMIT_MS = 8_000;

/**
 * The wait before the call is sent again, in ms, or `undefined` when it is not, for an `answer` with an error
 * status, or else `failure`, what the attempt threw (`TimeoutError`, `ConnectionError`; anything else is never retried);
 * `retries`: how many the call made so far.
 */
export function retryDelay(answer: Response | undefined, failure: unknown, retries: number, rules: RetryRules): number | undefined {
  if (retries >= rules.maxRetries || !rules.bodyReplayable) return undefined;
  const resendable = IDEMPOTENT_METHODS.has(rules.method) || rules.hasIdempotencyKey;
  if (answer !== undefined) {
    const { status, headers } = answer;
    // A 429 means the service did not act on the request, so even a POST may be sent again.
    if (!RETRY_STATUS_CODES.includes(status) || (status !== 429 && !resendable)) return undefined;
    const waitMs = RETRY_AFTER_STATUS_CODES.includes(status) ? retryAfterMs(headers) : undefined;
    // Longer than the caller will sit out: fail now with the wait on the error (RateLimitError.retryAfterMs).
    if (waitMs !== undefined) return waitMs > rules.maxRetryAfterMs ? undefined : waitMs;
  } else if (
    // A time-out may strike after the service acted: only a request safe to repeat is sent again.
    failure instanceof TimeoutError ? !resendable : !(failure instanceof ConnectionError && (resendable || requestNeverLeft(failure)))
  ) {
    return undefined;
  }
  // Exponential backoff 0.5 s, 1 s, 2 s … capped at 8 s, less up to 25 % jitter so that many clients failing
  // together do not come back together.
  return Math.min(BACKOFF_LIMIT_MS, 500 * 2 ** retries) * (1 - Math.random() * 0.25);
}

/**
 * The wait the service asked for, in ms: `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3), else
 * the window's reset as `parseRateLimit` reads it (`RateLimit-Reset`, `RateLimit`'s `t`, `X-RateLimit-Reset`); a
 * number of seconds from 2024-01-01 on is an epoch timestamp in both (`waitMsOf`, the one rule). A value of neither
 * form (`NaN`, `Infinity`, `1e400`, `-5`) is ignored, as if absent, so the normal backoff applies; a delay too large for a number (hundreds of digits) is
 * `Infinity`, beyond any cap, so the call fails at once with `RateLimitError`.
 *
 * @example
 * retryAfterMs(new Headers({ 'retry-after': '2' })) // 2000
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (value === undefined || value === '') return parseRateLimit(headers, now)?.resetMs;
  if (value.length > 1_000) return undefined;
  if (DELAY_SECONDS.test(value)) return waitMsOf(Number(value), now);
  // An HTTP date names a weekday or a month (RFC 9110 §5.6.7); Date.parse alone would take "1e400" or "-5" too.
  if (!/[a-z]{3}/i.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** delay-seconds: digits (a fraction tolerated, as ky reads it). */
const DELAY_SECONDS = /^\d+(?:\.\d+)?$/;

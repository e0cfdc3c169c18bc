/**
 * The retry rules ("Retries of writes" and "Rate limits" in the README's Assumptions table), expressed as
 * ky retry options. ky does the loop and the abortable wait between attempts; this file decides:
 * - POST and PATCH are never re-sent unless the call has an idempotency key, the answer was 429, or the
 *   connection failed before the request could leave (ky would re-send any method listed in `methods`);
 * - how long to wait: the service's `Retry-After` / `RateLimit-Reset` when usable, else backoff with jitter;
 * - a wait beyond the cap ends the retries with an error carrying the wait (ky would clamp it and retry);
 * - a body that cannot be replayed (a stream) is never re-sent.
 */
import type { RetryOptions } from 'ky';
import { ConnectionError } from '../errors.js';
import { callHook, type Hooks, type RetryHookInfo } from './hooks.js';
import type { KyGuards } from './ky.js';

/** What the retry decision needs to know about one call. */
export interface RetryContext {
  method: string;
  /** The call carries `Idempotency-Key`: the service replays its stored answer instead of acting twice. */
  hasIdempotencyKey: boolean;
  /** False for a streamed upload: its bytes are gone once sent. */
  bodyReplayable: boolean;
  /** Retries after the first attempt (default 2). */
  maxRetries: number;
  /** Longest `Retry-After` / `RateLimit-Reset` wait honoured, in ms (default 60 000). */
  maxRetryAfterMs: number;
  signal: AbortSignal | undefined;
  /** ky's `isHTTPError` / `isTimeoutError`, from the module loaded for this call (see ky.ts). */
  guards: KyGuards;
  /** The route template, for `onRetry`. */
  route: string;
  onRetry: Hooks['onRetry'];
}

/** RFC 9110 §9.2.2: methods whose repetition has the same effect as one request. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']);
const RETRY_STATUS_CODES = [408, 429, 500, 502, 503, 504];
/** RFC 6585 §4 (429) and RFC 9110 §10.2.3 (503) define `Retry-After` on these answers. */
const RETRY_AFTER_STATUS_CODES = [429, 503];
/** Error codes of Node / undici proving the request was never sent: nothing reached the service. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * ky retry options for one call. `shouldRetry` decides every case itself (true or false, never ky's defaults), and
 * the wait before a retry is the service's `Retry-After` when it gave a usable one, else our backoff: ky would
 * read the header on its own and wait its cap for a value it cannot parse (`NaN`, `Infinity`).
 */
export function retryOptions(context: RetryContext): RetryOptions | number {
  // No retries: ky's cheapest form (it normalizes, and deep-merges, every key given on every call).
  if (context.maxRetries === 0) return 0;
  /** The wait the service asked for before the retry being decided, when it asked for one. */
  let serverWaitMs: number | undefined;
  /** What the last failed attempt was, for `onRetry`; the attempt count. */
  let cause: Pick<RetryHookInfo, 'reason' | 'status'> = { reason: 'connection', status: undefined };
  let attempt = 1;
  // Only keys that differ from ky's defaults (its backoffLimit is already Infinity: the cap is applied in `delay`,
  // so a server's wait up to maxRetryAfterMs stands).
  return {
    limit: context.maxRetries,
    // ky asks `shouldRetry` only for a listed method: list this call's, which decides every case itself.
    methods: [context.method.toLowerCase()],
    // Exponential backoff 0.5 s, 1 s, 2 s … capped at 8 s, with up to 25 % jitter so that many clients
    // failing together do not come back together. A wait the service asked for is kept to the millisecond.
    delay: (attempt) => serverWaitMs ?? Math.min(BACKOFF_LIMIT_MS, 500 * 2 ** (attempt - 1)),
    // ky calls this with the delay just before it waits: the one place the final wait is known.
    jitter: (delay) => {
      const delayMs = serverWaitMs === undefined ? delay * (1 - Math.random() * 0.25) : delay;
      attempt++;
      callHook(context.onRetry, () => ({ method: context.method, route: context.route, attempt, delayMs, ...cause }));
      return delayMs;
    },
    shouldRetry: ({ error }) => {
      const decision = shouldRetry(error, context);
      serverWaitMs = decision.waitMs;
      if (decision.retry && context.onRetry !== undefined) cause = causeOf(error, context.guards);
      return decision.retry;
    },
  };
}

const BACKOFF_LIMIT_MS = 8_000;

function causeOf(error: unknown, { isHTTPError, isTimeoutError }: KyGuards): Pick<RetryHookInfo, 'reason' | 'status'> {
  if (isHTTPError(error)) return { reason: 'status', status: error.response.status };
  return { reason: isTimeoutError(error) ? 'timeout' : 'connection', status: undefined };
}

/** Whether to send the call again, and after how long when the service said (else the backoff applies). */
export interface RetryDecision {
  retry: boolean;
  waitMs?: number | undefined;
}

/** The retry rules for one failed attempt. */
export function shouldRetry(error: unknown, context: RetryContext): RetryDecision {
  if (context.signal?.aborted === true || !context.bodyReplayable) return NO;
  const { isHTTPError, isTimeoutError } = context.guards;
  const resendable = IDEMPOTENT_METHODS.has(context.method) || context.hasIdempotencyKey;
  if (isHTTPError(error)) {
    const { status, headers } = error.response;
    if (!RETRY_STATUS_CODES.includes(status)) return NO;
    // A 429 means the service did not act on the request, so even a POST may be sent again.
    if (status !== 429 && !resendable) return NO;
    if (!RETRY_AFTER_STATUS_CODES.includes(status)) return YES;
    const waitMs = retryAfterMs(headers);
    if (waitMs === undefined) return YES;
    // Longer than the caller will sit out: fail now with the wait on the error (RateLimitError.retryAfterMs).
    return waitMs > context.maxRetryAfterMs ? NO : { retry: true, waitMs };
  }
  // A time-out may strike after the service acted: only a request safe to repeat is sent again.
  if (isTimeoutError(error)) return resendable ? YES : NO;
  if (error instanceof ConnectionError) return resendable || requestNeverLeft(error) ? YES : NO;
  return NO;
}

const YES: RetryDecision = { retry: true };
const NO: RetryDecision = { retry: false };

/**
 * True when the cause chain of a connection failure holds a code proving that nothing was sent
 * (connection refused, DNS failure). Walks `cause` and `AggregateError.errors` (happy eyeballs).
 */
export function requestNeverLeft(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 8) return false;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && NEVER_SENT_CODES.has(code)) return true;
  if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => requestNeverLeft(e, depth + 1))) return true;
  return requestNeverLeft(cause, depth + 1);
}

/**
 * The wait the service asked for, in ms: `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3), else
 * `RateLimit-Reset` as delay-seconds (draft-ietf-httpapi-ratelimit-headers); a number of seconds past 2024 is
 * taken as an epoch timestamp, as ky reads it. A value of neither form (`NaN`, `Infinity`, `1e400`, `-5`) is
 * ignored, as if absent, so the normal backoff applies; a delay too large for a number (hundreds of digits) is
 * `Infinity`, beyond any cap, so the call fails at once with `RateLimitError`.
 *
 * @example
 * retryAfterMs(new Headers({ 'retry-after': '2' })) // 2000
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const value = (headers.get('retry-after') ?? headers.get('ratelimit-reset'))?.trim();
  if (value === undefined || value === '' || value.length > 1_000) return undefined;
  if (DELAY_SECONDS.test(value)) {
    const ms = Number(value) * 1000;
    return Math.max(0, ms >= EPOCH_THRESHOLD_MS ? ms - now : ms);
  }
  // An HTTP date names a weekday or a month (RFC 9110 §5.6.7); Date.parse alone would take "1e400" or "-5" too.
  if (!/[a-z]{3}/i.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** delay-seconds: digits (a fraction tolerated, as ky reads it). */
const DELAY_SECONDS = /^\d+(?:\.\d+)?$/;
const EPOCH_THRESHOLD_MS = Date.parse('2024-01-01');

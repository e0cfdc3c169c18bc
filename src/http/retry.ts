/**
 * The retry rules ("Retries of writes" and "Rate limits" in the README's Assumptions table), expressed as
 * ky retry options. ky does the loop, the backoff, the jitter, the abortable wait between attempts and the
 * `Retry-After` / `RateLimit-Reset` wait; this file adds only what ky cannot say on its own:
 * - POST and PATCH are never re-sent unless the call has an idempotency key, the answer was 429, or the
 *   connection failed before the request could leave (ky would re-send any method listed in `methods`);
 * - a wait beyond the cap ends the retries with an error carrying the wait (ky would clamp it and retry);
 * - a body that cannot be replayed (a stream) is never re-sent.
 */
import type { RetryOptions } from 'ky';
import { ConnectionError } from '../errors.js';
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
}

/** RFC 9110 §9.2.2: methods whose repetition has the same effect as one request. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']);
const RETRY_STATUS_CODES = [408, 429, 500, 502, 503, 504];
/** RFC 6585 §4 (429) and RFC 9110 §10.2.3 (503) define `Retry-After` on these answers. */
const RETRY_AFTER_STATUS_CODES = [429, 503];
/** Error codes of Node / undici proving the request was never sent: nothing reached the service. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * ky retry options for one call. Every method is listed so that ky asks `shouldRetry`, which applies our
 * method rules; a result of `undefined` lets ky apply its own status list and `Retry-After` handling.
 */
export function retryOptions(context: RetryContext): RetryOptions {
  return {
    limit: context.maxRetries,
    methods: ['get', 'head', 'put', 'delete', 'options', 'trace', 'post', 'patch'],
    statusCodes: RETRY_STATUS_CODES,
    afterStatusCodes: RETRY_AFTER_STATUS_CODES,
    maxRetryAfter: context.maxRetryAfterMs,
    // Exponential backoff 0.5 s, 1 s, 2 s … capped at 8 s, with up to 25 % jitter so that many clients
    // failing together do not come back together.
    delay: (attempt) => 500 * 2 ** (attempt - 1),
    backoffLimit: 8_000,
    jitter: (delay) => delay * (1 - Math.random() * 0.25),
    shouldRetry: ({ error }) => shouldRetry(error, context),
  };
}

/** `false`: stop; `true`: retry with backoff; `undefined`: retry as ky's defaults say (status / Retry-After). */
export function shouldRetry(error: unknown, context: RetryContext): boolean | undefined {
  if (context.signal?.aborted === true || !context.bodyReplayable) return false;
  const { isHTTPError, isTimeoutError } = context.guards;
  const resendable = IDEMPOTENT_METHODS.has(context.method) || context.hasIdempotencyKey;
  if (isHTTPError(error)) {
    const { status, headers } = error.response;
    if (RETRY_AFTER_STATUS_CODES.includes(status)) {
      const wait = retryAfterMs(headers);
      if (wait !== undefined && wait > context.maxRetryAfterMs) return false;
    }
    // A 429 means the service did not act on the request, so even a POST may be sent again.
    if (status === 429) return undefined;
    return resendable ? undefined : false;
  }
  // A time-out may strike after the service acted: only a request safe to repeat is sent again.
  if (isTimeoutError(error)) return resendable;
  if (error instanceof ConnectionError) return resendable || requestNeverLeft(error);
  return false;
}

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
 * The wait the service asked for, in ms: `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3),
 * else `RateLimit-Reset` as delay-seconds (draft-ietf-httpapi-ratelimit-headers), read like ky reads them
 * (a number past 2024 is taken as an epoch timestamp). `undefined` when neither header is usable.
 *
 * @example
 * retryAfterMs(new Headers({ 'retry-after': '2' })) // 2000
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const value = headers.get('retry-after') ?? headers.get('ratelimit-reset');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) {
    const ms = seconds * 1000;
    return Math.max(0, ms >= Date.parse('2024-01-01') ? ms - now : ms);
  }
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

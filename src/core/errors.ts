/**
 * Error classes shared by the OAuth helper and the request pipeline.
 * One base class (`PostSchedError`), `APIError` and one subclass per HTTP status family,
 * and the errors that happen before or without an HTTP answer (`ConnectionError`, `TimeoutError`,
 * `ValidationError`, `ResponseValidationError`). No error ever holds a token, secret, code or verifier.
 * Their fields are `declare`d and set by the constructors, in the order declared: no field initializer is emitted.
 */
import { PostSchedError } from './base-error.js';
import { parseRateLimit, type RateLimitInfo } from './rate-limit.js';
import { scrub } from './scrub.js';

export { PostSchedError };

/**
 * The service answered with an error status. `body` is the parsed JSON body (or the text, when it was not
 * JSON); `requestId` comes from `x-request-id` and is what the service's support will ask for.
 *
 * @example
 * catch (err) { if (err instanceof APIError) console.error(err.status, err.requestId, err.body) }
 */
export class APIError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'APIError';
  /** The HTTP status of the answer (`404`). */
  declare readonly status: number;
  /** The answer's headers (response headers: they never include the request's `Authorization`). */
  declare readonly headers: Headers;
  /** The parsed JSON error body, the text when it was not JSON, or `undefined` when empty. */
  declare readonly body: unknown;
  /** The `x-request-id` header, when the service sent one: quote it to the service's support. */
  declare readonly requestId: string | undefined;

  constructor(status: number, body: unknown, headers: Headers, message?: string) {
    const requestId = headers.get('x-request-id') ?? undefined;
    super(message ?? describeAPIError(status, body, requestId));
    this.status = status;
    this.headers = headers;
    this.body = body;
    this.requestId = requestId;
  }
}

/**
 * 3xx: the service answered with a redirect. API calls never follow one: it would carry your headers and your
 * writes to another address (and a 303 would turn a create into a GET). A moved API means a new `baseUrl`.
 * In a browser the target is hidden (`location` is then `undefined`).
 */
export class RedirectError extends APIError {
  /** @internal */
  static override readonly id: string = 'RedirectError';
  /** Where the service redirected to (`Location`, resolved against the request URL when relative). */
  declare readonly location: string | undefined;

  constructor(status: number, body: unknown, headers: Headers, message?: string) {
    const location = headers.get('location') ?? undefined;
    super(
      status,
      body,
      headers,
      message ??
        // Following would send the headers (the token) and a write to another address.
        `${status} redirect${location === undefined ? '' : ` to ${scrub(location.slice(0, 500))}`}: not followed. If the API moved, set \`baseUrl\` to its new address.`,
    );
    this.location = location;
  }
}

/** 400: the service rejected the request as malformed. */
export class BadRequestError extends APIError {
  /** @internal */
  static override readonly id: string = 'BadRequestError';
}

/** 401: the access token was refused, even after one refresh. The user may need to authorize again. */
export class AuthenticationError extends APIError {
  /** @internal */
  static override readonly id: string = 'AuthenticationError';
}

/**
 * 403: the token is valid but lacks a permission. When the service names the missing scope
 * (`WWW-Authenticate: Bearer error="insufficient_scope", scope="posts:write"`, RFC 6750 §3.1),
 * `missingScope` holds it: ask the user to authorize again with that scope.
 */
export class PermissionDeniedError extends APIError {
  /** @internal */
  static override readonly id: string = 'PermissionDeniedError';
  /** The scope the token lacks, when `WWW-Authenticate` names it (`posts:write`). */
  declare readonly missingScope: string | undefined;

  constructor(status: number, body: unknown, headers: Headers, message?: string) {
    const missingScope = parseInsufficientScope(headers.get('www-authenticate'));
    super(
      status,
      body,
      headers,
      message ??
        (missingScope === undefined
          ? undefined
          : // The service's own words (often the same advice) stay on `body`: the message says it once.
            statusLine(status, `the access token lacks the "${missingScope}" scope; authorize the user again, asking for it`, headers.get('x-request-id') ?? undefined)),
    );
    this.missingScope = missingScope;
  }
}

/** 404: no such resource (or not visible to this user). */
export class NotFoundError extends APIError {
  /** @internal */
  static override readonly id: string = 'NotFoundError';
}

/** 409: the request conflicts with the resource's state (for example deleting a published post). */
export class ConflictError extends APIError {
  /** @internal */
  static override readonly id: string = 'ConflictError';
}

/** 422: the service understood the request but rejected its content. */
export class UnprocessableEntityError extends APIError {
  /** @internal */
  static override readonly id: string = 'UnprocessableEntityError';
}

/**
 * 429: too many requests, after the SDK's own retries, or with a wait longer than the retry cap.
 * `retryAfterMs` is the wait the service asked for, when it said one.
 */
export class RateLimitError extends APIError {
  /** @internal */
  static override readonly id: string = 'RateLimitError';
  /** How long the service asked to wait (`Retry-After` / `RateLimit-Reset`), in ms, when it said. */
  declare readonly retryAfterMs: number | undefined;
  /** When the wait ends (`retryAfterMs` from when the error was made): the time to try again. */
  declare readonly retryAt: Date | undefined;
  /** What the answer's `RateLimit-*` / `X-RateLimit-*` headers said (limit, remaining, reset), when it sent them. */
  declare readonly rateLimit: RateLimitInfo | undefined;

  constructor(status: number, body: unknown, headers: Headers, message?: string, retryAfterMs?: number) {
    super(
      status,
      body,
      headers,
      message ??
        (retryAfterMs === undefined
          ? undefined
          : describeWithHint(status, body, headers, `The service asked to wait ${Math.ceil(retryAfterMs / 1000)} s before the next request.`)),
    );
    this.retryAfterMs = retryAfterMs;
    this.retryAt = retryAfterMs !== undefined && retryAfterMs < 8.64e15 ? new Date(Date.now() + retryAfterMs) : undefined;
    this.rateLimit = parseRateLimit(headers);
  }
}

/** 5xx: the service failed. Safe requests were already retried. */
export class InternalServerError extends APIError {
  /** @internal */
  static override readonly id: string = 'InternalServerError';
}

/**
 * No HTTP answer: the connection was refused or reset, DNS failed, or the body could not be read. A write that may
 * have reached the service is one too, and `isOutcomeUnknown` tells it apart.
 * `cause` holds the runtime's own error (never the request, which carries the Authorization header).
 */
export class ConnectionError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'ConnectionError';
}

/**
 * What a write whose outcome is unknown carries: it may have reached the service, and its answer was lost.
 * See `isOutcomeUnknown`.
 */
export interface OutcomeUnknown {
  /** Always `true`: what `isOutcomeUnknown` checks. */
  readonly outcomeUnknown: true;
  /** The call's `idempotencyKey`, when it had one: send the write again with it. */
  readonly idempotencyKey: string | undefined;
  /** The `x-request-id` of the answer that broke off, when its headers arrived. */
  readonly requestId: string | undefined;
}

/**
 * True when a write (POST, PUT, PATCH, DELETE) failed after its request may have reached the service: the service
 * may have acted (a post may exist). The error is still a `ConnectionError` or a `TimeoutError`.
 *
 * Unknown: the request was handed to fetch and no whole answer came back: a reset, "socket hang up" / "other side
 * closed", `UND_ERR_SOCKET`, a body that broke off, a time-out once fetch had the request, or any failure fetch
 * does not name (a browser's "Failed to fetch"). Certainly never left (not unknown): nothing was handed to fetch
 * (a time-out waiting for a token or a turn), or the failure names a connection that never opened: `ECONNREFUSED`,
 * `ENOTFOUND`, `EAI_AGAIN`, `ENETUNREACH`, `EHOSTUNREACH`, `UND_ERR_CONNECT_TIMEOUT`, a refused TLS certificate.
 *
 * What to do: send the write again with the same `idempotencyKey`. Without a key the SDK never sends it again: look
 * for the result first (`posts.list`), and send again only when it is not there.
 *
 * @example
 * catch (err) { if (isOutcomeUnknown(err)) await retryLater(err.idempotencyKey) }
 */
export function isOutcomeUnknown(error: unknown): error is (ConnectionError | TimeoutError) & OutcomeUnknown {
  return (error instanceof ConnectionError || error instanceof TimeoutError) && (error as Partial<OutcomeUnknown>).outcomeUnknown === true;
}

/**
 * The answer's body was larger than the SDK reads: `maxResponseBytes` of the client (API calls) or the fixed
 * limit of token answers, counted after decompression. Reading stopped at the limit and the connection was
 * dropped, so memory stays bounded whatever the server sends.
 */
export class ResponseTooLargeError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'ResponseTooLargeError';
  /** The limit that was reached, in bytes. */
  declare readonly limitBytes: number;
  /** The HTTP status of the answer whose body was too large. */
  declare readonly status: number;

  constructor(limitBytes: number, status: number, hint = 'If the service really sends answers this large, raise the client\'s `maxResponseBytes`.') {
    super(`The answer (HTTP ${status}) is over ${limitBytes} bytes, the most the SDK reads. ${hint}`);
    this.limitBytes = limitBytes;
    this.status = status;
  }
}

/** The service did not answer within the time-out (per attempt). For a write, `isOutcomeUnknown` says whether it may have acted. */
export class TimeoutError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'TimeoutError';
  /** The time-out that ran out, in ms. */
  declare readonly timeoutMs: number;

  constructor(timeoutMs: number, message?: string) {
    super(message ?? `The request timed out after ${timeoutMs} ms. Raise \`timeoutMs\` if the service is known to be slow.`);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Bad input, caught before any request is sent. `path` names the field (`['account_ids', 0]`).
 *
 * @example
 * catch (err) { if (err instanceof ValidationError) console.error(err.path.join('.'), err.message) }
 */
export class ValidationError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'ValidationError';
  /** Where in the input the problem is: `['account_ids', 0]`; empty when it is the input as a whole. */
  declare readonly path: ReadonlyArray<string | number>;

  constructor(message: string, path: ReadonlyArray<string | number> = []) {
    super(message);
    this.path = path;
  }
}

/**
 * The service answered 2xx with a body that does not match the expected shape. `path` names the field,
 * `body` is the raw body as received, so nothing is lost.
 */
export class ResponseValidationError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'ResponseValidationError';
  /** Where in the answer the unexpected value is: `['data', 3, 'id']`. */
  declare readonly path: ReadonlyArray<string | number>;
  /** The answer's body as received. */
  declare readonly body: unknown;

  constructor(message: string, path: ReadonlyArray<string | number>, body: unknown) {
    super(message);
    this.path = path;
    this.body = body;
  }
}

/** The default message of an answer, then what the caller should do about it. */
function describeWithHint(status: number, body: unknown, headers: Headers, hint: string): string {
  return `${describeAPIError(status, body, headers.get('x-request-id') ?? undefined)} ${hint}`;
}

/** "404 Not Found: post p_1 does not exist (request req_42)": the service's own words when it gave some. */
function describeAPIError(status: number, body: unknown, requestId: string | undefined): string {
  return statusLine(status, serviceMessage(body), requestId);
}

/** "<status> <text>[: detail][ (request id)]". */
function statusLine(status: number, detail: string | undefined, requestId: string | undefined): string {
  // Both come from the server: credential-shaped parts redacted, control characters escaped (no forged log lines).
  const suffix = requestId === undefined ? '' : ` (request ${scrub(requestId.slice(0, 200))})`;
  return `${status} ${STATUS_TEXT[status] ?? 'Error'}${detail === undefined ? '' : `: ${scrub(detail)}`}${suffix}`;
}

/** The human part of an error body: `{error:{message}}`, `{message}`, `{error_description}` or `{error}`. */
function serviceMessage(body: unknown): string | undefined {
  if (typeof body === 'string') {
    const text = body.trim();
    if (text === '') return undefined;
    // A proxy's or gateway's error page: its markup would bury the status, and the page stays on `body`.
    if (/^<(?:!doctype|html|head|body)\b/i.test(text)) return HTML_PAGE;
    return truncate(text);
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const nested = record['error'];
  if (typeof nested === 'object' && nested !== null) {
    const message = (nested as Record<string, unknown>)['message'];
    if (typeof message === 'string') return truncate(message);
  }
  for (const key of ['message', 'error_description', 'error'] as const) {
    const value = record[key];
    if (typeof value === 'string') return truncate(value);
  }
  return undefined;
}

const HTML_PAGE = "the answer is an HTML page, not the service's JSON (a proxy or gateway may have answered); it is on `error.body`";

function truncate(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** RFC 6750 §3: `Bearer error="insufficient_scope", scope="posts:write"`. */
function parseInsufficientScope(header: string | null): string | undefined {
  if (header === null || !/error="?insufficient_scope"?/i.test(header)) return undefined;
  return /scope="([^"]*)"/i.exec(header)?.[1];
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/**
 * The error of an HTTP answer: its status picks the class (errors section of the README's Assumptions table), in this
 * one place, as openai-node's `APIError.generate` does. Beside errors.ts, not in it: errors.ts is the public list of
 * classes (the main entry exports all of it).
 */
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  RedirectError,
  UnprocessableEntityError,
} from './errors.js';
import { scrubHeaders, scrubValue } from './scrub.js';

/** The class of each status with one of its own (a wait is passed to each; only RateLimitError takes it). */
const ERROR_CLASSES: Partial<Record<number, new (status: number, body: unknown, headers: Headers, message?: string, retryAfterMs?: number) => APIError>> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** The `APIError` of an answer with `status`: `secrets` (the tokens sent) are cut out of its body and headers. */
export function makeAPIError(
  status: number,
  body: unknown,
  headers: Headers,
  options: { message?: string; retryAfterMs?: number; secrets?: readonly string[]; hint?: string | undefined } = {},
): APIError {
  const { message, retryAfterMs, secrets = [], hint } = options;
  // A server may echo the request's credentials in its answer: they never reach the error, its body or its headers.
  if (secrets.length > 0) {
    body = scrubValue(body, secrets);
    headers = scrubHeaders(headers, secrets);
  }
  const ErrorClass =
    status === 0 || (status >= 300 && status < 400) ? RedirectError : (ERROR_CLASSES[status] ?? (status >= 500 ? InternalServerError : APIError));
  const error = new ErrorClass(status, body, headers, message, retryAfterMs);
  // What the caller can do about it, after the default message (the service's words, the request id).
  return hint === undefined ? error : new ErrorClass(status, body, headers, `${error.message} ${hint}`, retryAfterMs);
}

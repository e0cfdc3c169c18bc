/**
 * One attempt of a call: the function ky uses as its `fetch`. ky calls it once per attempt (its retries
 * included) inside its time-out, so everything here is per attempt and timed:
 * - the access token is read per attempt (a retry after a refresh uses the new token);
 * - a 401 makes the token source refresh once per call, and the request is sent once more (Assumptions
 *   table, "Errors": one refresh, one retry) — ky's forced retries would spend a retry on it and replay
 *   the body through a clone;
 * - the response body is read here, so the time-out covers it and a reset while reading is a
 *   connection failure, not a hang;
 * - fetch's network TypeError becomes a `ConnectionError` whose cause holds no request or header;
 * - one debug line per attempt.
 */
import { bufferResponse } from '../buffer-response.js';
import { ConnectionError } from '../errors.js';
import type { TokenSource } from './auth.js';
import type { BodySource } from './body.js';
import { logAttempt, redact, type Logger } from './logger.js';

export interface AttemptContext {
  fetch: (input: Request, init?: RequestInit) => Promise<Response>;
  tokens: TokenSource;
  logger: Logger | undefined;
  body: BodySource | undefined;
}

/** A ky `fetch` for one call; its closure counts the call's attempts and remembers the one refresh. */
export function attemptFetch(context: AttemptContext): (input: Request | URL | string, init?: RequestInit) => Promise<Response> {
  let sent = 0;
  let refreshed = false;

  const send = async (request: Request, init: RequestInit | undefined, token: string): Promise<Response> => {
    // ky hands each attempt its own Request (it keeps a clone for the next attempt, and that clone is what
    // its HTTPError carries), so the header can be set in place: one Request and one AbortSignal fewer per
    // call than copying it. ky's TimeoutError does hold this request; the pipeline never lets it out.
    // A streamed body is attached here (body.ts says why), which takes a new Request. `redirect: 'error'`:
    // in any other mode fetch clones the request before sending it (Fetch standard, HTTP-network-or-cache
    // fetch, step 8.2), and cloning tees the body: the idle branch kept every byte of the upload (a 256 MB
    // file grew memory by 256 MB on Node 20). A stream cannot be re-sent after a 307/308 anyway, and a
    // 301/302 would turn the upload into a body-less GET.
    const outgoing =
      context.body === undefined
        ? request
        : new Request(request, { body: context.body.create(request.signal), duplex: 'half', redirect: 'error' } as RequestInit);
    outgoing.headers.set('authorization', `Bearer ${token}`); // RFC 6750 §2.1
    const retry = sent++;
    const started = performance.now();
    const log = (outcome: number | string) => {
      if (context.logger === undefined) return; // no URL parsing per call when nobody listens
      const path = new URL(request.url).pathname;
      logAttempt(context.logger, { method: request.method, path, outcome, durationMs: performance.now() - started, retry });
    };
    try {
      const response = await bufferResponse(await context.fetch(outgoing, init));
      log(response.status);
      return response;
    } catch (error) {
      log(request.signal.aborted ? 'aborted' : errorName(error));
      // An abort (the caller's, or ky's time-out) keeps its own error: ky and the pipeline map it.
      if (request.signal.aborted || !(error instanceof TypeError)) throw error;
      throw new ConnectionError(
        `Could not reach ${new URL(request.url).origin}: ${describeNetworkError(error)}. ` +
          'Check the base URL and the network.',
        { cause: sanitizeCause(error) },
      );
    }
  };

  return async (input, init) => {
    // ky always passes a Request; the wider type is ky's `fetch` signature.
    const request = input instanceof Request ? input : new Request(input, init);
    // Kept for the one re-send after a 401: sending consumes the request's body (a body-less request can
    // simply be sent again; cloning it would cost a Request and an AbortSignal on every call).
    const spare = refreshed ? undefined : request.body === null ? request : request.clone();
    const token = await context.tokens.get();
    const response = await send(request, init, token);
    if (response.status !== 401 || refreshed || spare === undefined) return response;
    refreshed = true;
    const fresh = await context.tokens.refresh(token);
    // A streamed upload cannot be sent again: the 401 stands (the next call will use the new token).
    if (fresh === undefined || context.body?.replayable === false) return response;
    return send(spare, init, fresh);
  };
}

function errorName(error: unknown): string {
  if (!(error instanceof Error)) return 'error';
  const code = findCode(error);
  return code === undefined ? error.name : `${error.name} ${code}`;
}

/** The innermost message (fetch's own is only "fetch failed"), with the code when there is one. */
function describeNetworkError(error: Error): string {
  let innermost: Error = error;
  for (let depth = 0; innermost.cause instanceof Error && depth < 8; depth++) innermost = innermost.cause;
  const message = redact(innermost.message);
  const code = findCode(error);
  return code === undefined || message.includes(code) ? message : `${message} (${code})`;
}

/** The first `code` in the cause chain (`ECONNREFUSED`, `UND_ERR_SOCKET` …). */
function findCode(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 8) return undefined;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  if (Array.isArray(errors) && errors.length > 0) return findCode(errors[0], depth + 1);
  return findCode(cause, depth + 1);
}

/**
 * A copy of the runtime's error chain keeping only name, message (redacted), `code` and `syscall`: the
 * original may reference the request, whose headers hold the access token.
 */
function sanitizeCause(error: unknown, depth = 0): Error | undefined {
  if (!(error instanceof Error) || depth > 8) return undefined;
  const nested = Array.isArray((error as { errors?: unknown }).errors)
    ? ((error as AggregateError).errors.map((e) => sanitizeCause(e, depth + 1)).filter((e) => e !== undefined) as Error[])
    : undefined;
  const cause = sanitizeCause(error.cause, depth + 1);
  const copy =
    nested === undefined
      ? new Error(redact(error.message), cause === undefined ? {} : { cause })
      : new AggregateError(nested, redact(error.message), cause === undefined ? {} : { cause });
  Object.defineProperty(copy, 'name', { value: error.name, enumerable: false, configurable: true, writable: true });
  if (typeof error.stack === 'string') copy.stack = redact(error.stack);
  for (const key of ['code', 'syscall', 'errno'] as const) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (typeof value === 'string' || typeof value === 'number') Object.assign(copy, { [key]: value });
  }
  return copy;
}

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
import { readBody } from '../buffer-response.js';
import { PostSchedError } from '../base-error.js';
import { ConnectionError } from '../errors.js';
import type { TokenSource } from './auth.js';
import type { BodySource } from './body.js';
import { callHook, headersView, type Hooks } from './hooks.js';
import { logAttempt, type Logger } from './logger.js';
import { isTraced, requestChannel, type RequestTrace } from './tracing.js';
import { describeNetworkError, errorName, sanitizeCause } from '../network-error.js';

export interface AttemptContext {
  fetch: (input: Request, init?: RequestInit) => Promise<Response>;
  tokens: TokenSource;
  logger: Logger | undefined;
  body: BodySource | undefined;
  /** The most of an answer's body that is read (the client's `maxResponseBytes`). */
  maxResponseBytes: number;
  /** Every access token this call sent, filled in as it goes: cut out of anything the server echoes. */
  sentTokens: string[];
  /** The token the request was built with (its Authorization header), when one was at hand. */
  presetToken: string | undefined;
  /** The route template (`/posts/{id}`) and the base URL's origin, for tracing and hooks. */
  route: string;
  origin: string;
  hooks: Hooks;
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
    if (token !== context.presetToken) outgoing.headers.set('authorization', `Bearer ${token}`); // RFC 6750 §2.1
    context.sentTokens.push(token);
    const retry = sent++;
    const started = performance.now();
    const log = (outcome: number | string) => {
      if (context.logger === undefined) return; // no URL parsing per call when nobody listens
      const path = new URL(request.url).pathname;
      logAttempt(context.logger, { method: request.method, path, outcome, durationMs: performance.now() - started, retry });
    };
    const { hooks } = context;
    callHook(hooks.onRequest, () => ({
      method: request.method,
      url: request.url,
      route: context.route,
      attempt: retry + 1,
      headers: headersView(outgoing.headers, token),
    }));
    const attempt = async (): Promise<Response> => {
      try {
        const response = await readBody(await context.fetch(outgoing, init), context.maxResponseBytes);
        log(response.status);
        callHook(hooks.onResponse, () => ({
          method: request.method,
          url: request.url,
          route: context.route,
          attempt: retry + 1,
          status: response.status,
          headers: headersView(response.headers, token),
          requestId: response.headers.get('x-request-id') ?? undefined,
          durationMs: performance.now() - started,
        }));
        return response;
      } catch (error) {
        log(request.signal.aborted ? 'aborted' : errorName(error));
        // An abort (the caller's, or ky's time-out) keeps its own error: ky and the pipeline map it. So do the
        // SDK's own errors (a body over the limit).
        if (request.signal.aborted || error instanceof PostSchedError) throw error;
        // Anything else a fetch throws (the runtime's TypeError, or whatever a custom fetch builds, which may hold
        // the Request or its init) becomes a ConnectionError holding only a sanitized copy of its chain.
        const detail = error instanceof Error ? describeNetworkError(error, [token]) : 'the fetch function failed';
        throw new ConnectionError(
          `Could not reach ${new URL(request.url).origin}: ${detail}. Check the base URL and the network.`,
          { cause: sanitizeCause(error, 0, [token]) },
        );
      }
    };
    const channel = requestChannel();
    if (!isTraced(channel)) return attempt();
    // The traced function returns nothing: the TracingChannel would put its result (the Response) on the context.
    const trace: RequestTrace = { method: request.method, route: context.route, origin: context.origin, attempt: retry + 1 };
    let response: Response | undefined;
    await channel.tracePromise(async () => {
      try {
        response = await attempt();
        trace.status = response.status;
      } finally {
        trace.durationMs = performance.now() - started;
      }
    }, trace);
    return response as Response;
  };

  return async (input, init) => {
    // ky always passes a Request; the wider type is ky's `fetch` signature.
    const request = input instanceof Request ? input : new Request(input, init);
    // Kept for the one re-send after a 401: sending consumes the request's body (a body-less request can
    // simply be sent again; cloning it would cost a Request and an AbortSignal on every call).
    const spare = refreshed ? undefined : request.body === null ? request : request.clone();
    // A refresh in flight is waited for only as long as the call lives: an abort or the time-out ends the wait.
    const token = context.tokens.peek() ?? (await untilAborted(context.tokens.get(), request.signal));
    const response = await send(request, init, token);
    if (response.status !== 401 || refreshed || spare === undefined) return response;
    refreshed = true;
    const fresh = await untilAborted(context.tokens.refresh(token), request.signal);
    // A streamed upload cannot be sent again: the 401 stands (the next call will use the new token).
    if (fresh === undefined || context.body?.replayable === false) return response;
    return send(spare, init, fresh);
  };
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts (the promise itself runs on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

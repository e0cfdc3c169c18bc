/**
 * One record of each attempt, fanned out to every listener that is set: the logger's line (logger.ts), the
 * `onRequest` / `onResponse` / `onRetry` views (hooks.ts) and the `postsched:request` TracingChannel (core/tracing.ts).
 * The record is the trace context itself (`RequestTrace`: method, route template, origin, attempt, then status and
 * duration): nothing in it can hold a secret. The log line and the hook views are made from it and from the call's
 * URL, each scrubbed where it is made. With no listener set, nothing is built: one check per attempt.
 */
import { TimeoutError } from '../core/errors.js';
import { errorName } from '../core/scrub.js';
import { callHook, headersView, requestIdOf, type Hooks, type RetryHookInfo } from './hooks.js';
import { logAttempt, type Logger } from './logger.js';
import { isTraced, requestChannel, type RequestTrace } from '../core/tracing.js';

/** Who listens to a client's calls (its `PipelineConfig`). */
export interface Listeners {
  readonly origin: string;
  readonly logger: Logger | undefined;
  readonly hooks: Hooks;
}

/** A call as its listeners see it: no body, no token. */
export interface ObservedCall {
  readonly method: string;
  /** The route template (`/posts/{id}`). */
  readonly route: string;
  /** The full URL, query included. */
  readonly url: string;
  readonly signal: AbortSignal | undefined;
}

/**
 * Runs `send`, attempt number `attempt` of `call`, and tells each listener that is set: `onRequest` (with the
 * request's `headers`, shown without credentials), the trace around it (`send` gets the trace headers its subscriber
 * set), then the log line and `onResponse`.
 */
export function observe(
  listeners: Listeners,
  call: ObservedCall,
  attempt: number,
  token: string,
  headers: Headers,
  send: (traceHeaders?: Readonly<Record<string, string>>) => Promise<Response>,
): Promise<Response> {
  const { hooks, logger } = listeners;
  const channel = requestChannel();
  const traced = isTraced(channel);
  if (!traced && logger === undefined && hooks.onRequest === undefined && hooks.onResponse === undefined) return send();

  const record: RequestTrace = { method: call.method, route: call.route, origin: listeners.origin, url: call.url, attempt };
  const url = new URL(call.url);
  const { method, route } = record;
  callHook(hooks.onRequest, () => ({ method, url: url.href, route, attempt, headers: headersView(headers, token) }));
  const started = performance.now();
  let response: Response | undefined;
  // The traced function returns nothing: the channel would put its result on the context.
  const run = async (): Promise<void> => {
    try {
      // A subscriber's trace context (`traceparent` …), set on `start`, goes with this attempt.
      response = await send(record.traceHeaders);
      record.status = response.status;
    } finally {
      record.durationMs = performance.now() - started;
    }
  };
  return (traced ? channel.tracePromise(run, record) : run()).then(
    () => {
      const answer = response as Response;
      if (logger !== undefined) logAttempt(logger, record, url, answer.status);
      callHook(hooks.onResponse, () => ({
        method,
        url: url.href,
        route,
        attempt,
        status: answer.status,
        headers: headersView(answer.headers, token),
        requestId: requestIdOf(answer, [token]),
        durationMs: record.durationMs as number,
      }));
      return answer;
    },
    (error: unknown) => {
      // The time-out and the caller's abort both cut the attempt off.
      if (logger !== undefined) logAttempt(logger, record, url, error instanceof TimeoutError || call.signal?.aborted === true ? 'aborted' : errorName(error));
      throw error;
    },
  );
}

/**
 * Tells `onRetry`, when set, that attempt `attempt` follows in `delayMs`, after an answer with `status` or, without
 * one, `failure` (a `TimeoutError`, or a `ConnectionError`).
 */
export function retrying(hooks: Hooks, call: ObservedCall, attempt: number, delayMs: number, status: number | undefined, failure?: unknown): void {
  callHook(hooks.onRetry, (): RetryHookInfo => ({
    method: call.method,
    route: call.route,
    attempt,
    delayMs,
    reason: status !== undefined ? 'status' : failure instanceof TimeoutError ? 'timeout' : 'connection',
    status,
  }));
}

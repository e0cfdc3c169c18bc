/**
 * Tracing without monkey-patching, on `node:diagnostics_channel` where that module exists (Node ≥ 20.16, Bun, Deno:
 * found through `process.getBuiltinModule`, so the default entry keeps no `node:` import), and nowhere else:
 * - the TracingChannel `postsched:call` around each SDK call, its waits, token requests and attempts inside it;
 * - the TracingChannel `postsched:request` around each wire request: each attempt of a call, and each token request;
 * - the channel `postsched:wait` once per wait the rate limiter makes a call sit out before it is sent.
 * With no subscriber nothing is built: one property read per call and per attempt. `@postsched/sdk/otel` turns them
 * into OpenTelemetry spans and metrics; docs/observability.md shows them used directly.
 *
 * @example
 * import diagnostics_channel from 'node:diagnostics_channel'
 * diagnostics_channel.tracingChannel('postsched:request').subscribe({
 *   start: (ctx) => console.log('→', ctx.method, ctx.route, 'attempt', ctx.attempt),
 *   asyncEnd: (ctx) => console.log('←', ctx.status, `${ctx.durationMs} ms`),
 *   error: (ctx) => console.log('✗', ctx.error),
 *   end() {}, asyncStart() {},
 * })
 */

/** The context object of each event on `postsched:call`: one SDK call, from its first attempt to its result. */
export interface CallTrace {
  /** `GET`, `POST` … */
  method: string;
  /** The route template: `/posts/{id}`; for `client.get(path)` and the other raw methods, the path as given. */
  route: string;
  /** `https://api.example.com`: scheme, host and port of the base URL. */
  origin: string;
  /** What the call failed with (set by the TracingChannel on `error`): an SDK error, or the abort reason. */
  error?: unknown;
}

/**
 * The context object of each event on `postsched:request`. It never holds a token or a body: `url` is the request's
 * URL (ids and query included, never a credential), `route` its template.
 */
export interface RequestTrace {
  /** `GET`, `POST` … */
  method: string;
  /** The route template: `/posts/{id}`; for `client.get(path)` and the other raw methods, the path as given. */
  route: string;
  /** `https://api.example.com`: scheme, host and port of the base URL. */
  origin: string;
  /** The URL requested, query included. */
  url: string;
  /** 1 for the first attempt, 2 for the first retry … (a token request: 1). */
  attempt: number;
  /** Set on a token request only: its `grant_type` (`refresh_token`, `authorization_code`). */
  grantType?: string | undefined;
  /**
   * Trace-context headers (`traceparent`, `tracestate` …) that a subscriber sets on `start`: the SDK sends them
   * with this request, so the server's span joins the trace. Never `authorization`.
   */
  traceHeaders?: Record<string, string>;
  /** The HTTP status, once the answer came (on `asyncEnd`). */
  status?: number;
  /** How long the attempt took, reading the answer included, in ms (on `asyncEnd` and `error`). */
  durationMs?: number;
  /** What the attempt failed with (set by the TracingChannel on `error`): an SDK error, or the abort reason. */
  error?: unknown;
}

/** The message on `postsched:wait`: the rate limiter holds a call `waitMs` before sending it. */
export interface WaitTrace {
  /** `GET`, `POST` … */
  method: string;
  /** The route template: `/posts/{id}`. */
  route: string;
  /** Scheme, host and port of the base URL. */
  origin: string;
  /** How long the call waits, in ms. */
  waitMs: number;
}

/** The part of Node's TracingChannel the pipeline uses. */
export interface TracingChannelLike {
  readonly hasSubscribers?: boolean;
  readonly start: { readonly hasSubscribers: boolean };
  readonly end: { readonly hasSubscribers: boolean };
  readonly asyncStart: { readonly hasSubscribers: boolean };
  readonly asyncEnd: { readonly hasSubscribers: boolean };
  readonly error: { readonly hasSubscribers: boolean };
  tracePromise<T>(fn: () => Promise<T>, context: object): Promise<T>;
}

interface ChannelLike {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

/** The TracingChannel of each wire request (`RequestTrace`), for subscribers. */
export const REQUEST_CHANNEL = 'postsched:request';
/** The TracingChannel of each SDK call (`CallTrace`), for subscribers. */
export const CALL_CHANNEL = 'postsched:call';
/** The channel of the rate limiter's waits (`WaitTrace`), for subscribers. */
export const WAIT_CHANNEL = 'postsched:wait';

interface Channels {
  request: TracingChannelLike;
  call: TracingChannelLike;
  wait: ChannelLike;
}

let channels: Channels | null | undefined;

/** The channels, or `null` where `node:diagnostics_channel` does not exist. Looked up once. */
function lookUp(): Channels | null {
  if (channels === undefined) {
    try {
      const getBuiltin = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
      const dc = getBuiltin?.('node:diagnostics_channel') as { tracingChannel?: (name: string) => TracingChannelLike; channel: (name: string) => ChannelLike } | undefined;
      channels = typeof dc?.tracingChannel === 'function' ? { request: dc.tracingChannel(REQUEST_CHANNEL), call: dc.tracingChannel(CALL_CHANNEL), wait: dc.channel(WAIT_CHANNEL) } : null;
    } catch {
      channels = null;
    }
  }
  return channels;
}

/** The `postsched:request` TracingChannel, or `null` where `node:diagnostics_channel` does not exist. */
export function requestChannel(): TracingChannelLike | null {
  return lookUp()?.request ?? null;
}

/** Whether anyone listens (TracingChannel.hasSubscribers is newer than Node 20.0; the sub-channels are not). */
export function isTraced(tc: TracingChannelLike | null): tc is TracingChannelLike {
  if (tc === null) return false;
  if (typeof tc.hasSubscribers === 'boolean') return tc.hasSubscribers;
  return tc.start.hasSubscribers || tc.end.hasSubscribers || tc.asyncStart.hasSubscribers || tc.asyncEnd.hasSubscribers || tc.error.hasSubscribers;
}

/**
 * Runs `fn` traced on `postsched:call` (when anyone listens) with the record `describe` builds. The traced function
 * returns nothing: the channel would put the call's result on the record.
 */
export function traceCall<T>(describe: () => CallTrace, fn: () => Promise<T>): Promise<T> {
  const tc = lookUp()?.call ?? null;
  return isTraced(tc) ? tracedRun(tc, describe(), fn) : fn();
}

/**
 * Runs `fetch`, a token request to `url` with `grantType`, traced on `postsched:request` (when anyone listens); it is
 * given the trace headers a subscriber set, to send with the request.
 */
export function traceTokenRequest(url: string, grantType: string | undefined, fetch: (traceHeaders: Record<string, string> | undefined) => Promise<Response>): Promise<Response> {
  const tc = requestChannel();
  if (!isTraced(tc)) return fetch(undefined);
  const { origin, pathname } = new URL(url);
  const record: RequestTrace = { method: 'POST', route: pathname, origin, url, attempt: 1, grantType };
  const started = performance.now();
  return tracedRun(tc, record, async () => {
    try {
      const response = await fetch(record.traceHeaders);
      record.status = response.status;
      return response;
    } finally {
      record.durationMs = performance.now() - started;
    }
  });
}

/** Tells `postsched:wait` subscribers that the call of `trace` waits `waitMs` for its turn. */
export function publishWait(describe: () => WaitTrace): void {
  const wait = lookUp()?.wait;
  if (wait?.hasSubscribers === true) wait.publish(describe());
}

/** `fn` through `tc.tracePromise`, its result kept off the record. */
function tracedRun<T>(tc: TracingChannelLike, record: object, fn: () => Promise<T>): Promise<T> {
  let result: T;
  return tc.tracePromise(async () => void (result = await fn()), record).then(() => result);
}

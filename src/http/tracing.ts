/**
 * Tracing without monkey-patching: each attempt of each call is published on the `node:diagnostics_channel`
 * TracingChannel `postsched:request` where that module exists (Node ≥ 20.16, Bun, Deno: found through
 * `process.getBuiltinModule`, so the default entry keeps no `node:` import), and nowhere else. With no subscriber
 * nothing is built: one property read per attempt.
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

/**
 * The context object of each event on `postsched:request`. It never holds a header, a token or a body: the
 * route is the template (`/posts/{id}`), not the path with its ids.
 */
export interface RequestTrace {
  /** `GET`, `POST` … */
  method: string;
  /** The route template: `/posts/{id}`; for `client.get(path)` and the other raw methods, the path as given. */
  route: string;
  /** `https://api.example.com`: scheme, host and port of the base URL. */
  origin: string;
  /** 1 for the first attempt, 2 for the first retry … */
  attempt: number;
  /** The HTTP status, once the answer came (on `asyncEnd`). */
  status?: number;
  /** How long the attempt took, reading the answer included, in ms (on `asyncEnd` and `error`). */
  durationMs?: number;
  /** What the attempt failed with (set by the TracingChannel on `error`): an SDK error, or the abort reason. */
  error?: unknown;
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

/** The channel's name, for subscribers. */
export const REQUEST_CHANNEL = 'postsched:request';

let channel: TracingChannelLike | null | undefined;

/** The TracingChannel, or `null` where `node:diagnostics_channel` does not exist. Looked up once. */
export function requestChannel(): TracingChannelLike | null {
  if (channel === undefined) {
    try {
      const getBuiltin = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
      const dc = getBuiltin?.('node:diagnostics_channel') as { tracingChannel?: (name: string) => TracingChannelLike } | undefined;
      channel = typeof dc?.tracingChannel === 'function' ? dc.tracingChannel(REQUEST_CHANNEL) : null;
    } catch {
      channel = null;
    }
  }
  return channel;
}

/** Whether anyone listens (TracingChannel.hasSubscribers is newer than Node 20.0; the sub-channels are not). */
export function isTraced(tc: TracingChannelLike | null): tc is TracingChannelLike {
  if (tc === null) return false;
  if (typeof tc.hasSubscribers === 'boolean') return tc.hasSubscribers;
  return tc.start.hasSubscribers || tc.end.hasSubscribers || tc.asyncStart.hasSubscribers || tc.asyncEnd.hasSubscribers || tc.error.hasSubscribers;
}

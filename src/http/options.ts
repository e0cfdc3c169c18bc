/**
 * What the request pipeline (request.ts) takes: the options of every API method (public), the call a resource
 * describes (`RequestSpec`) and the client's settings (`PipelineConfig`).
 */
import type { BodySource } from './body.js';
import type { Hooks } from './hooks.js';
import type { Logger } from './logger.js';
import type { RateLimiterLike } from './rate-limiter.js';

/**
 * What `new Headers(…)` takes. Not the DOM's `HeadersInit` name: @types/node declares `Headers` but not
 * `HeadersInit`, so a Node project without the DOM lib could not resolve it in our .d.ts files.
 */
export type HeadersInput = ConstructorParameters<typeof Headers>[0];

/** Options every API method takes as its last argument. */
export interface RequestOptions {
  /** Cancels the call, including the wait between retries. The call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Time-out of each attempt in ms, an integer from 1 to 2 147 483 647 (default: the client's, 30 000). */
  timeoutMs?: number;
  /** Retries after the first attempt, an integer from 0 to 10 (default: the client's, 2). */
  maxRetries?: number;
  /** Extra headers for this call. */
  headers?: HeadersInput;
  /**
   * Query parameters the SDK does not know, added to this call's URL (to every page of a list); a key here replaces
   * the SDK's own. The escape hatch for what the service supports beyond the SDK's types.
   *
   * @example
   * client.posts.list({}, { extraQuery: { status: 'queued_for_review' } })
   */
  extraQuery?: Record<string, string | number | boolean>;
}

/** Options of a call that creates something: an idempotency key makes it safe to retry. */
export interface WriteRequestOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`, the same on every attempt: the service replays its stored answer to a repeat,
   * so the SDK may retry the call after a 5xx or a time-out. Without one, a POST/PATCH is never re-sent
   * unless the service answered 429 or the connection failed before anything was sent.
   */
  idempotencyKey?: string;
  /**
   * Body fields the SDK does not know, merged into this call's JSON body; a key here replaces the SDK's own. The
   * escape hatch for what the service supports beyond the SDK's types (the params objects take known fields only).
   *
   * @example
   * client.posts.create({ account_ids: ['acc_1'], publish_at }, { extraBody: { campaign: 'spring' } })
   */
  extraBody?: Record<string, unknown>;
}

/** Client options, which a call cannot change: say where they go instead of ignoring them. */
const CLIENT_OPTIONS = ['baseUrl', 'auth', 'fetch', 'logger', 'rateLimiter', 'maxRetryAfterMs', 'maxResponseBytes', 'appInfo', 'onRequest', 'onResponse', 'onRetry'];
export const clientOption = (name: string) => (CLIENT_OPTIONS.includes(name) ? ' It is a client option: pass it to `new PostSched()` or `client.withOptions()`.' : '');

/**
 * The options a GET takes, and a call that writes. `extraBody` is let through to its own check, which says which
 * calls take it.
 */
export const READ_OPTIONS = ['signal', 'timeoutMs', 'maxRetries', 'headers', 'extraQuery', 'extraBody'];
export const WRITE_OPTIONS = [...READ_OPTIONS, 'idempotencyKey'];

/** One call, as a resource describes it. `path` is relative to the base URL and already encoded. @internal */
export interface RequestSpec<T> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** The route template (`/posts/{id}`), for tracing and hooks. */
  route: string;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  body?: BodySource;
  /** Checks and types the parsed JSON body; throws `ResponseValidationError`. */
  parse: (body: unknown) => T;
  options?: WriteRequestOptions | undefined;
}

/**
 * The client settings the pipeline needs (see `PostSchedOptions`), computed once from the options: clients made from
 * the same options share one (src/client-setup.ts). @internal
 */
export interface PipelineConfig {
  baseUrl: string;
  /** The base URL's origin, for tracing and hooks. */
  origin: string;
  /** The headers every call sends (the client's, the User-Agent among them, `accept`), as ky takes them. */
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  maxRetries: number;
  maxRetryAfterMs: number;
  maxResponseBytes: number;
  fetch: (input: Request, init?: RequestInit) => Promise<Response>;
  logger: Logger | undefined;
  hooks: Hooks;
  /** The backoff every client made from this setup shares (the given `rateLimiter`, else one of its own). */
  rateLimiter: RateLimiterLike;
}

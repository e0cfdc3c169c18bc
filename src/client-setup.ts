/**
 * What a `PostSched` takes from its options apart from `auth`, checked and computed once. Clients made from the
 * same options share it: `UserClients` makes one for all its users, so a client per user is a few small objects
 * (the token source, the pipeline, the client), not a copy of the headers, hooks and settings.
 */
import { checkBaseUrl } from './core/base-url.js';
import { checkedHeaders } from './http/headers.js';
import type { PipelineConfig } from './http/options.js';
import { userAgent } from './core/user-agent.js';
import { checkOptions, integerOption, invalidOption, MAX_RETRIES, MAX_TIMEOUT_MS, optionalFunction, optionNames } from './core/invalid-option.js';
import type { PostSchedOptions } from './client-options.js';
import { RateLimiter, type RateLimiterLike } from './http/rate-limiter.js';

/** The options of a client (without `auth`) and the pipeline settings made from them. */
export interface ClientSetup {
  /** The options as given (own properties only), what `withOptions` starts from; `auth` is each client's own. */
  readonly options: Partial<PostSchedOptions>;
  readonly config: PipelineConfig;
}

/**
 * Passes a ready `ClientSetup` to `new PostSched` in its options object. Not exported from the package: only the
 * SDK's own code (UserClients) makes clients this way.
 */
export const CLIENT_SETUP: unique symbol = Symbol('PostSched setup');

/** Default `maxResponseBytes`: 32 MiB, thousands of times a page of posts, far below what would hurt a process. */
const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** Looked up per call, so a fetch patched after the client was built (msw, tracing) is used. */
const globalFetch = (input: Request, init?: RequestInit): Promise<Response> => globalThis.fetch(input, init);

/** Every option of `new PostSched()`. */
const CLIENT_OPTIONS = /* @__PURE__ */ optionNames<PostSchedOptions>({
  baseUrl: 0, auth: 0, timeoutMs: 0, maxRetries: 0, maxRetryAfterMs: 0, maxResponseBytes: 0, fetch: 0, logger: 0, rateLimiter: 0, headers: 0, appInfo: 0, onRequest: 0, onResponse: 0, onRetry: 0,
});

/**
 * Checks every option but `auth` (`ValidationError` naming the option; an unknown one is refused as an option of
 * `of`) and computes what each call reuses.
 */
export function setUpClient(given: Partial<PostSchedOptions>, of = 'new PostSched()'): ClientSetup {
  const options = checkOptions(given, CLIENT_OPTIONS, of);
  // https only (bearer tokens travel with every request), loopback http for development and tests.
  const baseUrl = checkBaseUrl(options.baseUrl).href;
  const headers = checkedHeaders(options.headers, 'headers');
  const { rateLimiter = new RateLimiter() } = options;
  // By shape, not instanceof: a RedisRateLimiter from another copy of the SDK (CJS beside ESM) is one too.
  if (typeof (rateLimiter as Partial<RateLimiterLike> | null)?.take !== 'function') invalidOption('rateLimiter', 'must be a RateLimiter or a RedisRateLimiter.');
  const agent = userAgent(options.appInfo);
  if (agent !== undefined && !headers.has('user-agent')) headers.set('user-agent', agent);
  const config: PipelineConfig = {
    baseUrl,
    origin: new URL(baseUrl).origin,
    headers: { ...Object.fromEntries(headers), accept: 'application/json' },
    timeoutMs: integerOption(options.timeoutMs, 'timeoutMs', 30_000, 1, MAX_TIMEOUT_MS),
    maxRetries: integerOption(options.maxRetries, 'maxRetries', 2, 0, MAX_RETRIES),
    maxRetryAfterMs: integerOption(options.maxRetryAfterMs, 'maxRetryAfterMs', 60_000, 0, MAX_TIMEOUT_MS),
    maxResponseBytes: integerOption(options.maxResponseBytes, 'maxResponseBytes', DEFAULT_MAX_RESPONSE_BYTES, 1, Number.MAX_SAFE_INTEGER),
    fetch: optionalFunction(options.fetch, 'fetch') ?? globalFetch,
    logger: options.logger,
    rateLimiter,
    hooks: { onRequest: optionalFunction(options.onRequest, 'onRequest'), onResponse: optionalFunction(options.onResponse, 'onResponse'), onRetry: optionalFunction(options.onRetry, 'onRetry') },
  };
  return { options, config };
}

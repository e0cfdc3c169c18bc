/**
 * The options of `new PostSched(…)` and of `withOptions`: in a file of their own, read by the client and by the setup
 * that checks them (client-setup.ts), so that neither imports the other.
 */
import type { AppInfo } from './core/user-agent.js';
import type { Auth } from './http/auth.js';
import type { Hooks } from './http/hooks.js';
import type { Logger } from './http/logger.js';
import type { HeadersInput } from './http/options.js';
import type { RateLimiterLike } from './http/rate-limiter.js';

/** Options of `new PostSched(…)`. */
export interface PostSchedOptions extends Hooks {
  /** The service's base URL, the one `OAuthClient` takes: `/oauth/token` and the API routes (`/posts`) are under it, with the service's version prefix if it has one (`https://api.postsched.example`; the mock's `http://127.0.0.1:4010`). */
  baseUrl: string | URL;
  /** A `TokenManager`, a fixed access token, or a function returning one. */
  auth: Auth;
  /** Time-out of each attempt in ms, reading the answer included. Default 30 000. */
  timeoutMs?: number;
  /** Retries after the first attempt, for failures safe to retry. Default 2. */
  maxRetries?: number;
  /**
   * Longest wait asked by `Retry-After` / `RateLimit-Reset` that the SDK sits out, in ms. Beyond it the
   * call fails at once with a `RateLimitError` carrying the wait. Default 60 000.
   */
  maxRetryAfterMs?: number;
  /**
   * The most of an answer's body the SDK reads, in bytes, counted after decompression. A larger answer fails
   * with `ResponseTooLargeError` and the connection is dropped, so a broken or hostile server cannot exhaust
   * memory. Default 33 554 432 (32 MiB); a page of posts is a few KB.
   */
  maxResponseBytes?: number;
  /** Any Fetch-compatible function (tests, proxies, edge runtimes). Default: the global `fetch`. */
  fetch?: (input: Request, init?: RequestInit) => Promise<Response>;
  /**
   * Shares this client's backoff after a 429 and the pacing of its stated quota (`RateLimit-*`) with other clients
   * holding the same limiter: a `RateLimiter`, or a `RedisRateLimiter` (`@postsched/sdk/redis`) for every process. Default: one of its
   * own, shared with its `withOptions` copies. README, "Rate limits".
   */
  rateLimiter?: RateLimiterLike;
  /** Gets one debug line per attempt (method, path, status, duration, retry); never headers or tokens. */
  logger?: Logger;
  /** Headers added to every request. `Authorization` is always the SDK's; a `User-Agent` here replaces the SDK's. */
  headers?: HeadersInput;
  /**
   * Your app, appended to the SDK's `User-Agent` (`postsched-sdk/0.1.0 node/22.12.0 MyApp/1.2.3 (+https://…)`), so
   * the service's operators can tell your traffic apart.
   */
  appInfo?: AppInfo;
}

/** What `client.withOptions(…)` may change: everything but the base URL and the auth, which the copy shares. */
export type PostSchedOverrides = Omit<PostSchedOptions, 'baseUrl' | 'auth'>;

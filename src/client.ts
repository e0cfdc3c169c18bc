/**
 * `PostSched`: the client. It checks its options, builds the one request pipeline and hangs the
 * resources on it.
 */
import { ValidationError } from './errors.js';
import { checkBaseUrl } from './base-url.js';
import { toTokenSource, type Auth } from './http/auth.js';
import type { Logger } from './http/logger.js';
import { Pipeline, type HeadersInput } from './http/request.js';
import { Accounts } from './resources/accounts.js';
import { Analytics } from './resources/analytics.js';
import { Media } from './resources/media.js';
import { Posts } from './resources/posts.js';
import { invalidOption } from './invalid-option.js';
import { inspectAs } from './oauth/inspect.js';

export type { Auth } from './http/auth.js';
export type { Logger } from './http/logger.js';
export { APIPromise, type WithResponse } from './http/api-promise.js';
export type { HeadersInput, RequestOptions, WriteRequestOptions } from './http/request.js';
export type { UploadFile, UploadProgress, NodeReadableLike } from './http/multipart.js';
export { retryAfterMs } from './http/retry.js';

/** Options of `new PostSched(…)`. */
export interface PostSchedOptions {
  /** The service's base URL, with any version prefix: `https://api.example.com/v1`. */
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
  /** Any Fetch-compatible function (tests, proxies, edge runtimes). Default: the global `fetch`. */
  fetch?: (input: Request, init?: RequestInit) => Promise<Response>;
  /** Gets one debug line per attempt (method, path, status, duration, retry); never headers or tokens. */
  logger?: Logger;
  /** Headers added to every request. `Authorization` is always the SDK's. */
  headers?: HeadersInput;
}

/** `setTimeout`'s ceiling (ky refuses more). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * The Post Scheduling Service client.
 *
 * @example
 * import { PostSched } from '@postsched/sdk'
 *
 * const client = new PostSched({ baseUrl: 'https://api.postsched.example/v1', auth: tokenManager })
 * const post = await client.posts.create({ account_ids: ['acc_1'], publish_at: new Date(Date.now() + 3_600_000), text: 'Hi' })
 * for await (const account of client.accounts.list()) console.log(account.name)
 */
export class PostSched {
  /** Schedule, read, change, cancel and list posts. */
  readonly posts: Posts;
  /** The user's connected social accounts. */
  readonly accounts: Accounts;
  /** Streamed uploads to the media library. */
  readonly media: Media;
  /** Post-level analytics. */
  readonly analytics: Analytics;
  readonly #baseUrl: string;

  constructor(options: PostSchedOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new ValidationError('new PostSched() needs an options object: { baseUrl, auth }.', []);
    }
    // https only (bearer tokens travel with every request), loopback http for development and tests.
    this.#baseUrl = checkBaseUrl(options.baseUrl).href;
    const pipeline = new Pipeline({
      baseUrl: this.#baseUrl,
      tokens: toTokenSource(options.auth),
      timeoutMs: checkNumber(options.timeoutMs, 'timeoutMs', 30_000, 1, MAX_TIMEOUT_MS),
      maxRetries: checkNumber(options.maxRetries, 'maxRetries', 2, 0, 10),
      maxRetryAfterMs: checkNumber(options.maxRetryAfterMs, 'maxRetryAfterMs', 60_000, 0, MAX_TIMEOUT_MS),
      // Looked up per call, so a fetch patched after the client was built (msw, tracing) is used.
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      logger: options.logger,
      headers: new Headers(options.headers),
    });
    this.posts = new Posts(pipeline);
    this.accounts = new Accounts(pipeline);
    this.media = new Media(pipeline);
    this.analytics = new Analytics(pipeline);
    inspectAs(this, () => `PostSched { baseUrl: '${this.#baseUrl}' }`);
  }

  /** Only the base URL: the auth (a token, or a manager holding a refresh token) never shows. */
  toJSON(): {
    /** The base URL. */
    baseUrl: string;
  } {
    return { baseUrl: this.#baseUrl };
  }
}

function checkNumber(value: number | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    invalidOption(name, `must be an integer from ${min} to ${max}.`);
  }
  return value;
}

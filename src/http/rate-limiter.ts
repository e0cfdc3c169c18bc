/**
 * `RateLimiter`: one backoff per user (or wider `key`), shared by every client of that user that holds the limiter
 * (every client of a `UserClients`, a lone `PostSched` and its `withOptions` copies). The request loop (http/request.ts)
 * asks `waitMs` before each attempt (a Map lookup) and tells `learn` every answer; only a service's own header ever
 * blocks a key: a 429 / 503 with `Retry-After` (or `RateLimit-Reset`), or `RateLimit-Remaining: 0` with a reset.
 * A block is only ever extended. `RedisRateLimiter` (@postsched/sdk/redis) shares the blocks across processes.
 */
import { optionalFunction } from '../core/invalid-option.js';
import { parseRateLimit } from '../core/rate-limit.js';
import { callHook } from './hooks.js';
import { retryAfterMs } from './retry.js';

/** What a key's limit is now (`users.rateLimit(userId)`, `client.rateLimit`). */
export interface RateLimitState {
  /** When calls may go out again; `undefined` when they may now. */
  blockedUntil: Date | undefined;
  /** Calls waiting for the block to pass (in this process). */
  queued: number;
}

/** Told to `onRateLimit`: a key became limited (or its block was extended), or its block passed. */
export interface RateLimitEvent {
  /** The key: the user id (a `UserClients` user), `default` (a lone client), or what the `key` option made of it. */
  key: string;
  /** `limited`: the key's calls wait (a new block, or a longer one); `cleared`: the block passed. */
  state: 'limited' | 'cleared';
  /** Until when (`limited`); `undefined` for `cleared`. */
  blockedUntil: Date | undefined;
}

/** Options of `new RateLimiter()` (and `new RedisRateLimiter()`). */
export interface RateLimiterOptions {
  /**
   * The scope of a block: the user id by default (a lone `PostSched`: `default`). A string puts every user in one
   * scope (a limit per app); a function maps a user id to its scope (per connected account, per tenant).
   */
  key?: string | ((userId: string) => string);
  /** Called when a key becomes limited (or its block is extended) and when the block passes. Never given a token. */
  onRateLimit?: (event: RateLimitEvent) => void;
}

/** The longest block kept (a day): a hostile or broken header cannot hold a user for longer. */
const MAX_BLOCK_MS = 86_400_000;

interface Entry {
  /** `Date.now()` until which the key is blocked; 0 once cleared. */
  until: number;
  queued: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * The in-process limiter, the default of every `UserClients` and lone `PostSched`: pass one to share it wider, or a
 * `RedisRateLimiter` to share it across processes.
 *
 * @example
 * const rateLimiter = new RateLimiter({ onRateLimit: (e) => metrics.event('postsched.rate_limit', e) })
 * const users = new UserClients({ oauth, baseUrl, rateLimiter })
 * users.rateLimit(userId) // { blockedUntil: Date | undefined, queued: number }
 */
export class RateLimiter {
  readonly #keys = new Map<string, Entry>();
  readonly #key: RateLimiterOptions['key'];
  readonly #onRateLimit: RateLimiterOptions['onRateLimit'];

  constructor(options: RateLimiterOptions = {}) {
    const { key, onRateLimit } = options;
    if (key !== undefined && typeof key !== 'string') optionalFunction(key, 'key');
    this.#key = key;
    this.#onRateLimit = optionalFunction(onRateLimit, 'onRateLimit');
  }

  /** The key of `userId`'s calls. @internal */
  keyOf(userId: string): string {
    const key = this.#key;
    return key === undefined ? userId : typeof key === 'string' ? key : String(key(userId));
  }

  /** What `key`'s limit is now. */
  state(key: string): RateLimitState {
    const entry = this.#keys.get(key);
    const until = entry?.until ?? 0;
    return { blockedUntil: until > Date.now() ? new Date(until) : undefined, queued: entry?.queued ?? 0 };
  }

  /** How long calls for `key` must still wait, in ms; 0 when they may go. @internal */
  waitMs(key: string): number {
    const entry = this.#keys.get(key);
    return entry === undefined ? 0 : Math.max(0, entry.until - Date.now());
  }

  /** A call starts (1) or ends (-1) waiting for `key`. @internal */
  queue(key: string, change: 1 | -1): void {
    const entry = this.#entry(key);
    entry.queued += change;
    this.#tidy(key, entry);
  }

  /**
   * What an answer for `key` says: a 429 or 503 with a wait blocks for it; `RateLimit-Remaining: 0` (or the
   * structured and `X-RateLimit-*` forms) with a reset holds until the reset. No header, no block. True when this
   * answer set or extended the block. @internal
   */
  learn(key: string, response: Response): boolean {
    const { status, headers } = response;
    let ms: number | undefined;
    if (status === 429 || status === 503) ms = retryAfterMs(headers);
    // Parsed only when a header of the kind is there: a Map miss on the happy path, no allocation.
    else if (headers.has('ratelimit') || headers.has('ratelimit-remaining') || headers.has('x-ratelimit-remaining')) {
      const info = parseRateLimit(headers);
      if (info?.remaining === 0) ms = info.resetMs;
    }
    return ms !== undefined && ms > 0 && this.block(key, ms);
  }

  /** Blocks `key` for `ms` from now unless it already is for longer; then shares it (`RedisRateLimiter`). @internal */
  block(key: string, ms: number): boolean {
    ms = Math.min(ms, MAX_BLOCK_MS);
    const extended = this.extend(key, ms);
    if (extended) this.share(key, ms);
    return extended;
  }

  /** Shares a new block with other processes: nothing here. */
  protected share(key: string, ms: number): void {
    void key;
    void ms;
  }

  /** Blocks `key` for `ms` from now unless already blocked longer, in this process only; true when extended. */
  protected extend(key: string, ms: number): boolean {
    const until = Date.now() + Math.min(ms, MAX_BLOCK_MS);
    const entry = this.#entry(key);
    if (!(until > entry.until) || !Number.isFinite(until)) return false;
    entry.until = until;
    clearTimeout(entry.timer);
    this.#arm(key, entry);
    callHook(this.#onRateLimit, () => ({ key, state: 'limited' as const, blockedUntil: new Date(until) }));
    return true;
  }

  /** A timer to tell `cleared` once the block has passed; unref'd: it keeps no process alive. */
  #arm(key: string, entry: Entry): void {
    entry.timer = setTimeout(() => {
      if (entry.until > Date.now()) return this.#arm(key, entry); // a timer that fired early
      entry.until = 0;
      entry.timer = undefined;
      this.#tidy(key, entry);
      callHook(this.#onRateLimit, () => ({ key, state: 'cleared' as const, blockedUntil: undefined }));
    }, entry.until - Date.now());
    (entry.timer as { unref?: () => void }).unref?.();
  }

  #entry(key: string): Entry {
    let entry = this.#keys.get(key);
    if (entry === undefined) this.#keys.set(key, (entry = { until: 0, queued: 0, timer: undefined }));
    return entry;
  }

  /** Drops a key nobody waits on once its block passed: the map holds only keys limited now. */
  #tidy(key: string, entry: Entry): void {
    if (entry.queued <= 0 && entry.timer === undefined) this.#keys.delete(key);
  }
}

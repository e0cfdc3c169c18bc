/**
 * `RateLimiter`: one backoff per user (or wider `key`), shared by every client of that user that holds the limiter
 * (every client of a `UserClients`, a lone `PostSched` and its `withOptions` copies). The request loop (http/request.ts)
 * takes a turn before each attempt (`take`: a Map lookup when the key is not limited) and tells `learn` every answer.
 * Only a service's own headers ever hold a key's calls (Assumptions table, "Rate-limit scope"), in two ways:
 * - a block: a 429 / 503 with `Retry-After` (or `RateLimit-Reset`): nobody sends until it passed. Only ever extended.
 * - a window's quota: once an answer says at most three quarters of the key's limit is left (`RateLimit-Remaining` ≤
 *   ¾ `RateLimit-Limit`, with a reset), every send takes one of the requests left until the reset, and with none
 *   left the calls wait for it. The next window then opens with `limit` requests (its end guessed from the longest
 *   reset seen until its first answer tells it), so the calls held for a user go out as many as the service allows,
 *   not all at once. Each answer lowers what is left to what the service says (it counts what other clients sent).
 * With no limit stated, a spent quota (`RateLimit-Remaining: 0`) is a block, and the calls a block held go out spread
 * over up to one more wait. It also holds the retry budget of the clients that share it (`retry`, `refill`).
 * The pipeline holds a limiter as a `RateLimiterLike`: `RedisRateLimiter` (@postsched/sdk/redis) is one too, holding a
 * `RateLimiter` for this process's steps and keeping all three in Redis for every process around them.
 */
import { invalidOption, optionalFunction } from '../core/invalid-option.js';
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
  /** `limited`: the key's calls wait (a new block, a longer one, or its window's requests all sent); `cleared`: they may go. */
  state: 'limited' | 'cleared';
  /** Until when (`limited`); `undefined` for `cleared`. */
  blockedUntil: Date | undefined;
}

/** Options of `new RateLimiter()` (and `new RedisRateLimiter()`). */
export interface RateLimiterOptions {
  /**
   * The scope of a block: the user id by default (a lone `PostSched`: `default`). A string puts every user in one
   * scope (a limit per app); a function maps a user id to its scope (per connected account, per tenant). It must
   * return a string: anything else is a `ValidationError` when that user's client is made.
   */
  key?: string | ((userId: string) => string);
  /** Called when a key becomes limited (or its block is extended) and when the block passes. Never given a token. */
  onRateLimit?: (event: RateLimitEvent) => void;
}

/**
 * A call's turn to send (`take`): go now (`waitMs` 0), having taken a request of quota window `window` (0: none
 * counted), or wait `waitMs` and ask again, plus a random part of up to `spreadMs` so that the calls held go out spread.
 * @internal
 */
export interface Turn {
  readonly waitMs: number;
  readonly window: number;
  readonly spreadMs: number;
}

/** What an answer (or Redis) said about the key's limit, in ms from now; `undefined`: not said. @internal */
export interface RateLimitFacts {
  /** A 429 / 503's wait: a block. */
  blockMs?: number | undefined;
  /** `RateLimit-Remaining`, `RateLimit-Reset` (ms) and `RateLimit-Limit` (or their other forms). */
  remaining?: number | undefined;
  resetMs?: number | undefined;
  limit?: number | undefined;
  /** Other requests of the answered one's client on their way, when it took no turn (already left out of `remaining`). */
  sending?: number | undefined;
  /** Said by Redis (`RedisRateLimiter`: another process's block or pacing), not by an answer: kept even for a key not limited here. */
  redis?: boolean;
  /** Redis's count of the key's quota window (its TAKE): this process's copy follows it (`limit` 0: Redis has none). */
  quota?: { window: number; left: number; endMs: number; limit: number };
}

/**
 * What the request pipeline (http/request.ts) asks of a rate limiter: what the `rateLimiter` option takes. A
 * `RateLimiter`, or a `RedisRateLimiter` (`@postsched/sdk/redis`) for every process.
 */
export interface RateLimiterLike {
  /** What `key`'s limit is now. */
  state(key: string): RateLimitState;
  /** The key of `userId`'s calls. @internal */
  keyOf(userId: string): string;
  /** How long calls for `key` must still wait, in ms; 0 when they may go. @internal */
  waitMs(key: string): number;
  /** A call's turn to send for `key` (a request of a quota window taken when it may go now). @internal */
  take(key: string): Turn | Promise<Turn>;
  /** A call starts (1) or ends (-1) waiting for `key`. @internal */
  queue(key: string, change: 1 | -1): void;
  /**
   * What an answer said (`answerFacts`) for `key`, `window`: the quota window its request took a turn of (0: none).
   * True when it set or extended a block; `undefined` when the key is not limited and nothing said limits it. @internal
   */
  learn(key: string, facts: RateLimitFacts, window: number): boolean | undefined;
  /** Whether a retry may be sent: takes one from the budget; false (nothing taken) when it is empty. @internal */
  retry(): boolean | Promise<boolean>;
  /** An answer that is no failure to retry: gives a tenth of a retry back to the budget. @internal */
  refill(): void;
}

/** The turn of a key nothing holds: the one object the happy path returns. @internal */
export const GO: Turn = /* @__PURE__ */ Object.freeze({ waitMs: 0, window: 0, spreadMs: 0 });

/**
 * The retry budget, in tenths of a retry: full at 10 retries; each retry takes 10, each answer that is no failure to
 * retry gives 1 back. Over any stretch, retries ≤ 10 + 10 % of such answers.
 */
export const RETRY_BUDGET = 100;

/** The longest block or window kept (a day): a hostile or broken header cannot hold a user for longer. */
export const MAX_BLOCK_MS = 86_400_000;

/**
 * One key's state and its two steps, in `Date.now()` ms: `take` a turn, `learn` from an answer (redis-rate-limiter.ts's
 * TAKE and LEARN scripts are the same steps, on the same fields, in Redis).
 */
class KeyLimit {
  /** Until when nobody sends (a 429 / 503's wait); 0 none. */
  #blockedUntil = 0;
  /** The quota window: its number (0: no quota known), the requests left in it, its end. */
  #window = 0;
  #left = 0;
  #end = 0;
  /** Requests of this window on their way (turn taken, no answer yet): they may land in the next window. */
  #sent = 0;
  /** The window was opened by a turn: its end is a guess until its first answer. */
  #guessed = false;
  /** The window's length: the longest reset seen. */
  #windowMs = 0;
  /** Requests per window, as the service said; 0 unknown (the key is not paced). */
  limit = 0;
  /** The limiter's: calls waiting here, the last use, until when `limited` was last told (0: cleared), its one timer and when it fires. */
  queued = 0;
  seen = 0;
  told = 0;
  timer: ReturnType<typeof setTimeout> | undefined;
  timerAt = 0;

  /** Until when calls wait: the block, or the window's end once its requests are all taken. */
  heldUntil(now: number): number {
    return Math.max(this.#blockedUntil, this.limit > 0 && this.#left <= 0 && this.#end > now ? this.#end : 0);
  }

  /**
   * Until when the state is worth keeping: a block until it passed; a quota a minute (or a window, if longer) past the
   * window's end or its last use here, so that a burst after a pause is paced from its first request (a key another
   * process keeps busy may go that long without a call here).
   */
  keepUntil(now: number): number {
    const until = this.heldUntil(now);
    return this.limit === 0 ? until : Math.max(until, Math.max(this.#end, this.seen) + Math.max(this.#windowMs, 60_000));
  }

  take(now: number): Turn {
    this.seen = now;
    if (now < this.#blockedUntil) {
      const waitMs = this.#blockedUntil - now;
      // No limit known: nothing says how many may go when it passes, so the held calls go out spread.
      return { waitMs, window: 0, spreadMs: this.limit === 0 ? Math.min(waitMs, 5_000) : 0 };
    }
    if (this.limit === 0) return GO;
    if (now >= this.#end) {
      // A new window: the previous one's requests still on their way may land in it, and count there.
      this.#window++;
      this.#left = this.limit - this.#sent;
      this.#sent = 0;
      this.#end = now + this.#windowMs;
      this.#guessed = true;
    }
    if (this.#left <= 0) return { waitMs: this.#end - now, window: 0, spreadMs: 0 };
    this.#left--;
    this.#sent++;
    return { waitMs: 0, window: this.#window, spreadMs: 0 };
  }

  /**
   * What an answer said: a block only ever extended; a quota counted in the window the request took its turn of (or
   * the current one, for a request that took none): what is left only ever lowered, the end only ever brought forward
   * (a reset is an upper bound: whole seconds, rounded up) but for a guessed one, which its first answer sets. True
   * when it set or extended a block.
   */
  learn({ blockMs, remaining, resetMs, limit, quota }: RateLimitFacts, window: number, now: number): boolean {
    if (quota !== undefined) {
      this.#follow(quota.window, quota.left, now + quota.endMs, quota.limit, now);
      return false;
    }
    this.seen = now;
    let blocked = false;
    // Its request arrived in this window: the service counts it there. An answer after the window's end may be of a
    // request that landed in the next one: still counted against it.
    if (window > 0 && window === this.#window && this.#sent > 0 && now < this.#end) this.#sent--;
    if (limit !== undefined) this.limit = limit;
    if (resetMs !== undefined) this.#windowMs = Math.min(MAX_BLOCK_MS, Math.max(this.#windowMs, resetMs));
    if (blockMs !== undefined && blockMs > 0) blocked = this.#extend(now + Math.min(blockMs, MAX_BLOCK_MS));
    if (remaining !== undefined && resetMs !== undefined) {
      const end = now + Math.min(resetMs, MAX_BLOCK_MS);
      if (this.limit === 0) {
        if (remaining === 0) blocked = this.#extend(end) || blocked; // no limit stated: a spent quota is a block
      } else if (this.#window === 0) {
        this.#follow(1, remaining, end, this.limit, now); // the first quota known
      } else if (window === this.#window || (window === 0 && !this.#guessed)) {
        if (this.#guessed || end < this.#end) this.#end = end;
        this.#guessed = false;
        this.#left = Math.min(this.#left, remaining);
      }
    }
    return blocked;
  }

  /** Sets the quota window (Redis's, or the first one known). */
  #follow(window: number, left: number, end: number, limit: number, now: number): void {
    this.#window = window;
    this.#left = left;
    this.#sent = 0;
    this.#end = end;
    this.#guessed = false;
    this.limit = limit;
    this.seen = now;
  }

  /** Extends the block to `until`; true when it was shorter. */
  #extend(until: number): boolean {
    if (!(until > this.#blockedUntil) || !Number.isFinite(until)) return false;
    this.#blockedUntil = until;
    return true;
  }
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
export class RateLimiter implements RateLimiterLike {
  readonly #keys = new Map<string, KeyLimit>();
  readonly #key: RateLimiterOptions['key'];
  readonly #onRateLimit: RateLimiterOptions['onRateLimit'];
  /** The retry budget of every client holding this limiter (`RETRY_BUDGET`). */
  #budget = RETRY_BUDGET;

  constructor(options: RateLimiterOptions = {}) {
    const { key, onRateLimit } = options;
    if (key !== undefined && typeof key !== 'string') optionalFunction(key, 'key');
    this.#key = key;
    this.#onRateLimit = optionalFunction(onRateLimit, 'onRateLimit');
  }

  /** The key of `userId`'s calls. @internal */
  keyOf(userId: string): string {
    const key = this.#key;
    if (key === undefined) return userId;
    if (typeof key === 'string') return key;
    const scope: unknown = key(userId);
    // Never String(scope): every user whose function returned `undefined` would share the scope "undefined".
    if (typeof scope !== 'string') {
      invalidOption('key', `returned ${scope == null ? String(scope) : `a value of type ${typeof scope}`} for a user id: it must return a string, that user's scope (e.g. \`(userId) => tenantOf(userId)\`).`);
    }
    return scope;
  }

  /** What `key`'s limit is now. */
  state(key: string): RateLimitState {
    const entry = this.#keys.get(key);
    const now = Date.now();
    const until = entry?.heldUntil(now) ?? 0;
    return { blockedUntil: until > now ? new Date(until) : undefined, queued: entry?.queued ?? 0 };
  }

  /** Whether this process paces `key` by a quota (a limit is known): `RedisRateLimiter` then takes its turns in Redis. @internal */
  paced(key: string): boolean {
    return (this.#keys.get(key)?.limit ?? 0) > 0;
  }

  /** How long calls for `key` must still wait, in ms, as this process knows; 0 when they may go. @internal */
  waitMs(key: string): number {
    const now = Date.now();
    return Math.max(0, (this.#keys.get(key)?.heldUntil(now) ?? 0) - now);
  }

  /**
   * A call's turn to send for `key`: at once (`GO`) unless a block holds the key, or its window's requests are all
   * taken; a request of a quota window is taken here. @internal
   */
  take(key: string): Turn {
    const entry = this.#keys.get(key);
    if (entry === undefined) return GO;
    const turn = entry.take(Date.now());
    this.#arm(key, entry);
    return turn;
  }

  /** Whether a retry may be sent: takes one from the budget; false (nothing taken) when it is empty. @internal */
  retry(): boolean | Promise<boolean> {
    if (this.#budget < 10) return false;
    this.#budget -= 10;
    return true;
  }

  /** An answer that is no failure to retry: gives a tenth of a retry back to the budget. @internal */
  refill(): void {
    if (this.#budget < RETRY_BUDGET) this.#budget++;
  }

  /** A call starts (1) or ends (-1) waiting for `key`. @internal */
  queue(key: string, change: 1 | -1): void {
    const entry = this.#entry(key);
    entry.queued += change;
    this.#arm(key, entry);
  }

  /**
   * What an answer (`answerFacts`) or Redis said for `key` (see the file's comment), `window`: the quota window its
   * request took a turn of (0: none). No entry is made for a key that is not limited and that nothing said limits.
   * True when it set or extended a block; `undefined` when nothing was applied. @internal
   */
  learn(key: string, facts: RateLimitFacts, window: number): boolean | undefined {
    if (window === 0 && facts.redis !== true && !this.#keys.has(key) && !holds(facts)) return undefined;
    const entry = this.#entry(key);
    const blocked = entry.learn(facts, window, Date.now());
    this.#arm(key, entry);
    return blocked;
  }

  /**
   * Tells `limited` when the key's calls are held longer than last told, and keeps one unref'd timer for the next
   * thing to do: tell `cleared` when they may go again, drop the entry once it is not worth keeping (`keepUntil`) and
   * no call waits on it.
   */
  #arm(key: string, entry: KeyLimit): void {
    const now = Date.now();
    const until = entry.heldUntil(now);
    if (until > now && until > entry.told) {
      entry.told = until;
      callHook(this.#onRateLimit, () => ({ key, state: 'limited' as const, blockedUntil: new Date(until) }));
    } else if (until <= now && entry.told > 0) {
      entry.told = 0;
      callHook(this.#onRateLimit, () => ({ key, state: 'cleared' as const, blockedUntil: undefined }));
    }
    const keep = entry.keepUntil(now);
    if (keep > now) {
      const at = Math.min(until > now ? until : keep, now + MAX_BLOCK_MS);
      // A timer due no later is kept: it comes back here and sets the next one (no timer replaced per call).
      if (entry.timer !== undefined && entry.timerAt <= at) return;
      clearTimeout(entry.timer);
      entry.timerAt = at;
      entry.timer = setTimeout(() => {
        entry.timer = undefined;
        this.#arm(key, entry);
      }, at - now);
      (entry.timer as { unref?: () => void }).unref?.();
      return;
    }
    clearTimeout(entry.timer);
    entry.timer = undefined;
    if (entry.queued <= 0 && this.#keys.get(key) === entry) this.#keys.delete(key);
  }

  #entry(key: string): KeyLimit {
    let entry = this.#keys.get(key);
    if (entry === undefined) this.#keys.set(key, (entry = new KeyLimit()));
    return entry;
  }
}

/**
 * What an answer says about its key's limit (see the file's comment), `window`: the quota window its request took a
 * turn of (0: none), `sending`: how many other requests of its client are on their way. `undefined`: nothing (no
 * rate-limit header, and no turn to account for).
 */
export function answerFacts(response: Response, window: number, sending: number): RateLimitFacts | undefined {
  const { status, headers } = response;
  const blockMs = status === 429 || status === 503 ? retryAfterMs(headers) : undefined;
  // Parsed only when a header of the kind is there: a Map miss on the happy path, no allocation.
  const info = headers.has('ratelimit') || headers.has('ratelimit-remaining') || headers.has('x-ratelimit-remaining') ? parseRateLimit(headers) : undefined;
  if (blockMs === undefined && info?.remaining === undefined && window === 0) return undefined;
  // A request that took no turn: the same client's others on their way are not in its count yet.
  const remaining = info?.remaining === undefined ? undefined : window === 0 ? Math.max(0, info.remaining - sending) : info.remaining;
  return { blockMs, remaining, resetMs: info?.resetMs, limit: info?.limit || undefined, sending: window === 0 ? sending : 0 };
}

/** Whether an answer's facts hold a key that is not limited yet: a block, a spent quota, or at most ¾ of it left. */
function holds({ blockMs, remaining, resetMs, limit }: RateLimitFacts): boolean {
  return (blockMs !== undefined && blockMs > 0) || (remaining !== undefined && resetMs !== undefined && (remaining === 0 || (limit !== undefined && remaining * 4 <= limit * 3)));
}

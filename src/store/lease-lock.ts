/**
 * The lock of the stores shared by many processes (`RedisTokenStore`, `PostgresTokenStore`): a lease with an owner
 * token and an expiry, kept by the database, so a holder that dies frees it after `lockTtlMs`. Each store says how
 * to take, extend, release and look at its lease (a `Lease`: its own commands or statements only); this file holds
 * what is the same for every store: the times, the decoding of what a waiter sees, the waiting (backoff, or watching the tokens while another process refreshes), the extension while the holder lives,
 * the release, and which locks the calling async chain holds.
 *
 * Node-only: the holder is tracked with `AsyncLocalStorage` (`node:async_hooks`, also in Deno and Bun): one for every
 * store, enabled only while some store holds its lock, so stores cost the rest of the process nothing (Node 20's
 * async hooks slow every promise while any `AsyncLocalStorage` is enabled).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomHex } from '../core/bytes.js';
import { integerOption, MAX_TIMEOUT_MS } from '../core/invalid-option.js';
import { sleep } from '../core/time-bound.js';
import type { TokenSet, TokenStoreLockOptions } from '../oauth/types.js';

/**
 * The stores' `lockTtlMs` and `lockWaitMs`, checked: 3 s and 45 s by default. The lease is a heartbeat: a holder that
 * stops running (killed, or frozen) is taken over about `lockTtlMs` later, well inside a service's overlap window.
 */
export function lockTimes(options: { lockTtlMs?: unknown; lockWaitMs?: unknown }): { ttlMs: number; waitMs: number } {
  return {
    ttlMs: integerOption(options.lockTtlMs, 'lockTtlMs', 3_000, 1, MAX_TIMEOUT_MS),
    waitMs: integerOption(options.lockWaitMs, 'lockWaitMs', 45_000, 0, MAX_TIMEOUT_MS),
  };
}

/**
 * One store's lease, in its database: one object per store (a class instance, not closures; a `UserClients` keeps a
 * store per cached user).
 */
export interface Lease {
  /**
   * Takes the lease for `owner`, for `ttlMs`, when nobody holds it (or its holder's expired, or it is `owner`'s
   * already: the same take sent again by a client that reconnected, its first answer lost): `true` when taken,
   * `'expired'` when taken from a holder whose lease expired without being released, `false` when not taken.
   */
  take(owner: string, ttlMs: number): Promise<boolean | 'expired'>;
  /** Pushes the expiry out to `ttlMs` from now while the lease is still `owner`'s: `false` once it is not. */
  extend(owner: string, ttlMs: number): Promise<boolean>;
  /** Frees the lease when it is still `owner`'s: `true` when it was. */
  release(owner: string): Promise<boolean>;
  /** For a waiter: the stored value (as read, decoded by the lock), and whether the lease is held (by anyone). */
  look(): Promise<{ stored: unknown; held: boolean }>;
  /** The store's error for a wait past `waitMs` (`code: 'lock_timeout'`). */
  timedOut(waitMs: number): Error;
}

/** What a store's lock needs besides its lease. */
export interface LeaseLockOptions {
  /** Expiry of the lease (`lockTtlMs`), in ms; a live holder extends it every third of this. */
  readonly ttlMs: number;
  /** How long a waiter waits (`lockWaitMs`) before the lease's `timedOut()` is thrown, in ms. */
  readonly waitMs: number;
  /** The store's values (`StoredTokens`): what a waiter sees is decoded by them. */
  readonly values: { decode(stored: unknown): Promise<{ readonly tokens: TokenSet | undefined }> };
}

/** A lock this async call chain holds; `outer`: one it held already (another store's, nested). */
interface LockHold {
  readonly lock: LeaseLock;
  readonly owner: string;
  released: boolean;
  readonly outer: LockHold | undefined;
}

// Which locks this async call chain holds: set() inside lock() must prove it is still the owner. One for every store,
// and disabled whenever no lock is held, so that neither the number of stores nor an idle one costs anything.
const held = new AsyncLocalStorage<LockHold>();
let holdsRunning = 0;

const FIRST_RETRY_MS = 10;
const MAX_RETRY_MS = 200;
/**
 * How long this process's holders keep the lock, a moving average (50 ms before the first): a waiter that watches
 * the tokens first looks after that long, then after twice as long, and so on up to 1 s between looks. Most waiters
 * so read the holder's result at their first or second look.
 */
let typicalHoldMs = 50;
const MAX_LOOK_MS = 1_000;
/** After taking a lease from a holder that never released it, the first look at the tokens for its save comes this soon. */
const FIRST_LOOK_AFTER_TAKEOVER_MS = 50;
/** The first and the longest pause between two tries of a release that failed. */
const RELEASE_RETRY_MS = 100;
const MAX_RELEASE_RETRY_MS = 5_000;
/** Takes of unknown outcome freed in the background per lock; a take past them expires by TTL. */
const MAX_UNKNOWN_TAKES = 8;

/** One store's lock: `run(fn)` runs `fn` holding the lease (see `RedisTokenStore.lock`). */
export class LeaseLock {
  readonly #lease: Lease;
  readonly #options: LeaseLockOptions;
  /** Owners whose take's outcome is unknown, with when the lease they may hold expires (`performance.now()` ms). */
  readonly #unknownTakes = new Map<string, number>();

  constructor(lease: Lease, options: LeaseLockOptions) {
    this.#lease = lease;
    this.#options = options;
  }

  /** The owner token of this lock when the calling async chain holds it (a write must then prove it still owns it). */
  owner(): string | undefined {
    for (let hold = held.getStore(); hold !== undefined; hold = hold.outer) {
      if (hold.lock === this) return hold.released ? undefined : hold.owner;
    }
    return undefined;
  }

  /**
   * Runs `fn` holding the lease; a nested call in the same chain runs `fn` at once. With `whileWaiting`, a waiter
   * looks at the tokens instead of retrying the lease, and ends the wait with what `whileWaiting` returns for them.
   */
  async run<T>(fn: () => Promise<T>, options?: TokenStoreLockOptions<T>): Promise<T> {
    if (this.owner() !== undefined) return fn();
    const owner = ownerToken();
    const ttlMs = this.#options.ttlMs;
    const whileWaiting = options?.whileWaiting;
    const taken = await this.#acquire(owner, ttlMs, whileWaiting);
    if (typeof taken === 'object') return taken.result;
    const hold: LockHold = { lock: this, owner, released: false, outer: held.getStore() };
    const stopExtending = this.#keepExtended(hold, ttlMs);
    const acquiredAt = performance.now();
    holdsRunning++;
    try {
      if (taken === 'expired') options?.onTakeover?.();
      if (taken === 'expired' && whileWaiting !== undefined) {
        // For one lease at most: a holder still running shows itself within one, and a dead one's user must be taken
        // over soon (the next refresh still inside the service's overlap window).
        const saved = await this.#awaitPendingSave(whileWaiting, Math.min(options?.pendingSaveMs ?? 0, ttlMs));
        if (saved !== undefined) return saved.result;
      }
      return await held.run(hold, fn);
    } finally {
      typicalHoldMs = Math.min(MAX_LOOK_MS, Math.max(5, typicalHoldMs + (performance.now() - acquiredAt - typicalHoldMs) / 5));
      hold.released = true;
      stopExtending();
      // No lock held anywhere: turn the async context tracking off again (run() turns it on).
      if (--holdsRunning === 0 && typeof held.disable === 'function') held.disable();
      await this.#release(owner, ttlMs);
    }
  }

  /**
   * Extends the lease (to `ttlMs` from now) every `lockTtlMs / 3` while the holder runs (one extension in flight at
   * most). Stops once the lease is no longer ours; failures are left to the expiry, and to `set()`'s own ownership check.
   */
  #keepExtended(hold: LockHold, ttlMs: number): () => void {
    let inFlight = false;
    const timer = setInterval(() => {
      if (inFlight || hold.released) return;
      inFlight = true;
      this.#lease
        .extend(hold.owner, ttlMs)
        .then((extended) => {
          if (!extended) clearInterval(timer);
        })
        .catch(() => {})
        .finally(() => (inFlight = false));
    }, Math.max(1, Math.floor(this.#options.ttlMs / 3)));
    // The lease matters only while the process does other work: it never keeps the process alive by itself (a save
    // retried in the background, inside the lock, while the store is gone).
    (timer as { unref?: () => void }).unref?.();
    return () => clearInterval(timer);
  }

  /**
   * The lease was taken from a holder whose lease expired unreleased: it may have sent a refresh whose answer it is
   * still saving (its store was down past its lease). Its save lands without the lease (a compare-and-set), so the
   * tokens are watched for up to `ms`, as a waiter watches them, before `fn` may refresh with the refresh token the
   * store holds (which that refresh may have rotated out).
   */
  async #awaitPendingSave<T>(whileWaiting: (stored: TokenSet | undefined) => T | undefined, ms: number): Promise<{ result: T } | undefined> {
    const until = performance.now() + ms;
    for (let look = 0; ; look++) {
      const result = whileWaiting((await this.#look()).tokens);
      if (result !== undefined) return { result };
      const left = until - performance.now();
      if (left <= 0) return undefined;
      await sleep(Math.min(left, MAX_LOOK_MS, FIRST_LOOK_AFTER_TAKEOVER_MS * 2 ** look));
    }
  }

  /**
   * Takes the lease until it succeeds, with capped exponential backoff and jitter; with `whileWaiting`, looks at the
   * tokens and the lease between tries instead, and tries again only once the lease is free. Resolves with the
   * take's result once the lease is ours (`'expired'`: taken from a holder that never released it), or `{ result }`
   * when `whileWaiting` ended the wait.
   */
  async #acquire<T>(owner: string, ttlMs: number, whileWaiting: ((stored: TokenSet | undefined) => T | undefined) | undefined): Promise<{ result: T } | true | 'expired'> {
    const deadline = performance.now() + this.#options.waitMs;
    for (let attempt = 0; ; attempt++) {
      const taken = await this.#take(owner, ttlMs);
      if (taken !== false) return taken;
      for (let look = 0; ; look++) {
        const left = deadline - performance.now();
        if (left <= 0) throw this.#lease.timedOut(this.#options.waitMs);
        const backoff =
          whileWaiting === undefined
            ? Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** attempt) * (0.5 + Math.random() / 2)
            : Math.min(MAX_LOOK_MS, typicalHoldMs * 2 ** look);
        await sleep(Math.min(left, backoff));
        if (whileWaiting === undefined) break;
        const seen = await this.#look();
        const result = whileWaiting(seen.tokens);
        if (result !== undefined) return { result };
        if (!seen.held) break;
      }
    }
  }

  /** The stored tokens (decoded) and whether the lease is held, for a waiter. */
  async #look(): Promise<{ tokens: TokenSet | undefined; held: boolean }> {
    const { stored, held } = await this.#lease.look();
    return { tokens: (await this.#options.values.decode(stored)).tokens, held };
  }

  async #take(owner: string, ttlMs: number): Promise<boolean | 'expired'> {
    try {
      return await this.#lease.take(owner, ttlMs);
    } catch (error) {
      // The take may have landed before the time-out, or land later: freed once it has, rather than block others.
      if (mayHaveLanded(error)) this.#releaseUnknownTake(owner, ttlMs);
      throw error;
    }
  }

  /**
   * Frees the lease `owner` may have taken (its take's outcome is unknown), in the background: one loop per lock for
   * all such takes (at most `MAX_UNKNOWN_TAKES`), its tries further and further apart (`RELEASE_RETRY_MS`, doubling
   * up to `MAX_RELEASE_RETRY_MS`), until each is freed or the lease it may hold has expired (`ttlMs`). A try that
   * fails (the store still down) ends the round. On timers that do not keep the process alive.
   */
  #releaseUnknownTake(owner: string, ttlMs: number): void {
    const until = performance.now() + ttlMs;
    if (this.#unknownTakes.size >= MAX_UNKNOWN_TAKES) return; // that one expires by TTL
    this.#unknownTakes.set(owner, until);
    if (this.#unknownTakes.size > 1) return; // the loop running takes it too
    const round = async (attempt: number): Promise<void> => {
      for (const [candidate, expires] of this.#unknownTakes) {
        if (performance.now() >= expires) {
          this.#unknownTakes.delete(candidate);
          continue;
        }
        const released = await this.#lease.release(candidate).catch(() => undefined);
        if (released === undefined) break; // the store is still down: the next round
        // `false`: not taken, yet; the take may still land (a statement stalled in the store), so tried again until expiry.
        if (released) this.#unknownTakes.delete(candidate);
      }
      if (this.#unknownTakes.size === 0) return;
      const timer = setTimeout(() => void round(attempt + 1), Math.min(MAX_RELEASE_RETRY_MS, RELEASE_RETRY_MS * 2 ** attempt));
      (timer as { unref?: () => void }).unref?.();
    };
    void round(0);
  }

  /**
   * Compare-and-release of a lease this holder took. Failures are swallowed: the caller's result (or error) matters
   * more. A release that failed (the store down or stalled) is tried again in the background, further and further
   * apart, until it lands or the lease (`ttlMs`, from its last extension) would have expired anyway: a store back from
   * an outage frees the lock at once instead of blocking the others for the rest of a refresh's lease. On a timer
   * that does not keep the process alive.
   */
  async #release(owner: string, ttlMs: number, attempt = 0): Promise<void> {
    try {
      await this.#lease.release(owner);
      return;
    } catch {
      // tried again below
    }
    const wait = Math.min(MAX_RELEASE_RETRY_MS, RELEASE_RETRY_MS * 2 ** attempt);
    if (wait >= ttlMs) return; // expires by TTL
    const timer = setTimeout(() => void this.#release(owner, ttlMs - wait, attempt + 1), wait);
    (timer as { unref?: () => void }).unref?.();
  }
}

/**
 * Whether a take that failed with `error` may have taken the lease all the same: unless the store answered with an
 * error (a PostgreSQL SQLSTATE, a Redis error reply) or the connection was never made, the statement may have run.
 */
function mayHaveLanded(error: unknown): boolean {
  for (let e = error as { sqlState?: unknown; code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e != null && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.sqlState === 'string' || (typeof e.code === 'string' && NOT_SENT.test(e.code))) return false;
    if (typeof e.message === 'string' && NOT_SENT.test(e.message)) return false;
  }
  return true;
}

/** Failures that say a command never ran: no connection, or an error reply (read-only replica, failed persistence). */
const NOT_SENT = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|Connection is closed|client is closed|READONLY|MISCONF/;

/** 128 random bits: a holder proves ownership with it, so it must not be guessable by another process. */
function ownerToken(): string {
  return randomHex(16);
}


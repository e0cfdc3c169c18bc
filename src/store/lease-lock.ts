/**
 * The lock of the stores shared by many processes (`RedisTokenStore`, `PostgresTokenStore`): a lease with an owner
 * token and an expiry, kept by the database, so a holder that dies frees it after `lockTtlMs`. Each store says how
 * to take, extend, release and look at its lease (a `Lease`); this file holds what is the same for every store: the
 * waiting (backoff, or watching the tokens while another process refreshes), the extension while the holder lives,
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

/** The stores' `lockTtlMs` and `lockWaitMs`, checked: 10 s and 45 s by default. */
export function lockTimes(options: { lockTtlMs?: unknown; lockWaitMs?: unknown }): { ttlMs: number; waitMs: number } {
  return {
    ttlMs: integerOption(options.lockTtlMs, 'lockTtlMs', 10_000, 1, MAX_TIMEOUT_MS),
    waitMs: integerOption(options.lockWaitMs, 'lockWaitMs', 45_000, 0, MAX_TIMEOUT_MS),
  };
}

/**
 * One store's lease, in its database, with how long it lasts and may be waited for: one object per store (a class
 * instance, not closures; a `UserClients` keeps a store per cached user).
 */
export interface Lease {
  /** Expiry of the lease, in ms; a live holder extends it every third of this. */
  readonly ttlMs: number;
  /** How long a waiter waits before `timedOut()` is thrown, in ms. */
  readonly waitMs: number;
  /** Takes the lease for `owner`, for `ttlMs`, when nobody holds it (or its holder's expired): `true` when taken. */
  take(owner: string, ttlMs: number): Promise<boolean>;
  /** Pushes the expiry out to `ttlMs` from now while the lease is still `owner`'s: `false` once it is not. */
  extend(owner: string, ttlMs: number): Promise<boolean>;
  /** Frees the lease when it is still `owner`'s: `true` when it was. */
  release(owner: string): Promise<boolean>;
  /** For a waiter: the stored tokens, and whether the lease is held (by anyone). */
  look(): Promise<{ tokens: TokenSet | undefined; held: boolean }>;
  /** The store's error for a wait past `waitMs`. */
  timedOut(): Error;
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

/** One store's lock: `run(fn)` runs `fn` holding the lease (see `RedisTokenStore.lock`). */
export class LeaseLock {
  readonly #lease: Lease;

  constructor(lease: Lease) {
    this.#lease = lease;
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
    // The lease lasts `lockTtlMs` from its take and each extension, or the holder's `leaseMs` when longer: what `fn` may
    // be doing while its process does not run at all (a refresh in flight, that another process must not repeat).
    const ttlMs = Math.max(this.#lease.ttlMs, Math.min(MAX_TIMEOUT_MS, Math.ceil(options?.leaseMs ?? 0) || 0));
    const waited = await this.#acquire(owner, ttlMs, options?.whileWaiting);
    if (waited !== undefined) return waited.result;
    const hold: LockHold = { lock: this, owner, released: false, outer: held.getStore() };
    const stopExtending = this.#keepExtended(hold, ttlMs);
    const acquiredAt = performance.now();
    holdsRunning++;
    try {
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
    }, Math.max(1, Math.floor(this.#lease.ttlMs / 3)));
    return () => clearInterval(timer);
  }

  /**
   * Takes the lease until it succeeds, with capped exponential backoff and jitter; with `whileWaiting`, looks at the
   * tokens and the lease between tries instead, and tries again only once the lease is free. Resolves `undefined`
   * once the lease is ours, or `{ result }` when `whileWaiting` ended the wait.
   */
  async #acquire<T>(owner: string, ttlMs: number, whileWaiting: ((stored: TokenSet | undefined) => T | undefined) | undefined): Promise<{ result: T } | undefined> {
    const deadline = performance.now() + this.#lease.waitMs;
    for (let attempt = 0; ; attempt++) {
      if (await this.#take(owner, ttlMs)) return undefined;
      for (let look = 0; ; look++) {
        const left = deadline - performance.now();
        if (left <= 0) throw this.#lease.timedOut();
        const backoff =
          whileWaiting === undefined
            ? Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** attempt) * (0.5 + Math.random() / 2)
            : Math.min(MAX_LOOK_MS, typicalHoldMs * 2 ** look);
        await sleep(Math.min(left, backoff));
        if (whileWaiting === undefined) break;
        const seen = await this.#lease.look();
        const result = whileWaiting(seen.tokens);
        if (result !== undefined) return { result };
        if (!seen.held) break;
      }
    }
  }

  async #take(owner: string, ttlMs: number): Promise<boolean> {
    try {
      return await this.#lease.take(owner, ttlMs);
    } catch (error) {
      // The take may have landed before the time-out, or land later: freed once it has, rather than block others.
      void this.#release(owner, ttlMs, true);
      throw error;
    }
  }

  /**
   * Compare-and-release. Failures are swallowed: the caller's result (or error) matters more. A release that failed
   * (the store down or stalled) is tried again in the background, up to a second apart, until it lands or the lease
   * (`ttlMs`, from its last extension) would have expired anyway: a store back from an outage frees the lock at once
   * instead of blocking the others for the rest of a refresh's lease. `taking`: after a take whose outcome is unknown,
   * tried again until it frees the lease, which the take may still take later. On a timer that does not keep the
   * process alive.
   */
  async #release(owner: string, ttlMs: number, taking = false, attempt = 0): Promise<void> {
    try {
      if ((await this.#lease.release(owner)) || !taking) return;
    } catch {
      // tried again below
    }
    const wait = Math.min(1_000, 100 * 2 ** attempt);
    if (wait >= ttlMs) return; // expires by TTL
    const timer = setTimeout(() => void this.#release(owner, ttlMs - wait, taking, attempt + 1), wait);
    (timer as { unref?: () => void }).unref?.();
  }
}

/** 128 random bits: a holder proves ownership with it, so it must not be guessable by another process. */
function ownerToken(): string {
  return randomHex(16);
}


/**
 * Keeps one user's access token valid: a cache read when it is fresh, one shared refresh when it is not.
 */
import { PostSchedError } from '../base-error.js';
import { ValidationError } from '../errors.js';
import { ReauthorizationRequiredError, TokenStoreError, type TokenStoreOperation } from './errors.js';
import { inspectAs } from './inspect.js';
import { MemoryTokenStore } from './memory-token-store.js';
import { newestKnown, recordRotation, recordStored, refreshOnce } from './shared-refresh.js';
import { copyTokenSet, describeTokens, sameTokens, tokenSetProblem } from './token-set.js';
import type { AccessTokenProvider, TokenSet, TokenStore } from './types.js';
import { checkOptions, invalidOption, optionalFunction, optionNames } from '../invalid-option.js';

/** Refresh this long before expiry, so a token handed out stays valid through the request that uses it. */
const DEFAULT_REFRESH_MARGIN_MS = 60_000;
/** Longest wait for one `store.get` / `store.set` / `onTokens` before the manager gives up on it. */
const DEFAULT_STORE_TIMEOUT_MS = 10_000;
/** Longest wait for `store.lock` to start running the refresh (above RedisTokenStore's 45 s `lockWaitMs`). */
const DEFAULT_LOCK_TIMEOUT_MS = 60_000;
/**
 * A token this manager just obtained is handed out for at least this long, whatever its `expires_in` says: a
 * service answering `expires_in: 0` (or 30 with the 60 s margin) would otherwise be refreshed, and its refresh
 * token rotated, on every call. A 401 still refreshes at once (`forceRefresh`).
 */
const MIN_REFRESH_INTERVAL_MS = 5_000;
/**
 * After a refresh saved inside the store's lock, the store is read again this long after the save (one read). The
 * processes that waited for that refresh read its result within about a second (RedisTokenStore's waiters look at
 * least once a second); one that found the store emptied first (Redis flushed or restarted) holds tokens that may be
 * rotated out, so it neither writes them back nor refreshes them. This manager holds the newest and writes them
 * back then, rather than at its next refresh (up to the token's lifetime later).
 */
const RECHECK_AFTER_MS = 2_000;

/** What the manager needs from the OAuth side: `OAuthClient` implements it. */
export interface TokenRefresher {
  /** Exchanges the refresh token in `previous` for a new TokenSet (see `OAuthClient.refresh`). */
  refresh(previous: TokenSet): Promise<TokenSet>;
}

/** Options of {@link TokenManager}. */
export interface TokenManagerOptions {
  /** Performs the refreshes: an `OAuthClient`. */
  oauth: TokenRefresher;
  /**
   * Where the tokens live. Default: a new `MemoryTokenStore` (one process). A store shared by several processes
   * should implement `lock`, so only one of them refreshes and the others use its result, and honour
   * `expectedRefreshToken` in `set` (see `TokenStore`).
   */
  store?: TokenStore;
  /**
   * How long before `expiresAt` a token counts as expired and is refreshed, in ms. Default 60 000. For a token
   * this manager obtained, it is at most half the token's lifetime (a 30 s token is used for 15 s, not refreshed
   * on every call).
   */
  refreshMarginMs?: number;
  /**
   * Called with every TokenSet the manager obtains by refreshing, after `store.set` and before the new access
   * token is handed to anyone, and awaited: persist the (possibly rotated) refresh token here. If it throws,
   * the caller gets a `TokenStoreError` and the call is made again before the next use.
   *
   * @example
   * onTokens: (tokens) => db.users.update(userId, { tokens: JSON.stringify(tokens) })
   */
  onTokens?: (tokens: TokenSet) => void | Promise<void>;
  /**
   * Longest wait for each `store.get`, `store.set` and `onTokens`, in ms: past it the call fails with a
   * `TokenStoreError` and the next call tries again, so a store that hangs never hangs the manager for good.
   * Also the longest wait for `store.lock` to settle (release its lock) once the refresh inside it is done: the
   * refresh's outcome then stands.
   * A `set` that timed out may still land: it is settled by re-reading the store before anything else is written;
   * inside the store's lock, a save of refreshed tokens is tried again for up to this long before the lock is given
   * up. Default 10 000.
   */
  storeTimeoutMs?: number;
  /**
   * Longest wait for `store.lock` to start running the refresh, in ms (`TokenStoreError` with operation `lock`
   * past it). Keep it above the store's own lock wait. Default 60 000.
   */
  lockTimeoutMs?: number;
  /**
   * @internal The user whose tokens these are (`UserClients` passes its `userId`): stamped into every TokenSet the
   * manager writes, and a stored TokenSet stamped with another is refused (`TokenStoreError`), never used or written.
   */
  userId?: string;
}

const TOKEN_MANAGER_OPTIONS = /* @__PURE__ */ optionNames<TokenManagerOptions>({ oauth: 0, store: 0, refreshMarginMs: 0, onTokens: 0, storeTimeoutMs: 0, lockTimeoutMs: 0, userId: 0 });

/** One refresh (or store re-read) in progress; `forcing` is the access token the service rejected, if any. */
interface Flight {
  readonly promise: Promise<TokenSet>;
  readonly forcing: string | undefined;
}

/** Tokens this manager obtained whose saving did not complete. */
interface Pending {
  readonly tokens: TokenSet;
  /** The refresh token they replace (the compare-and-set value). */
  readonly expected: string | undefined;
  /** When the refresh that obtained them started; `undefined` for tokens written back, not obtained. */
  readonly startedAt: number | undefined;
}

/**
 * Hands out valid access tokens for one user, refreshing them as needed.
 *
 * - A fresh cached token is returned without any I/O.
 * - Concurrent callers share one refresh; a failed refresh is not cached, the next call tries again. The managers
 *   of one process that share an `oauth` also share one refresh per refresh token, and never send one the process
 *   has seen replaced (they take its successor).
 * - With a locking store, a still-valid token costs one `store.get` and no lock; the lock is taken only to refresh.
 * - A refreshed TokenSet is saved (`store.set`, then `onTokens`) before anyone gets the new access token.
 * - Saving never moves the store backwards: each write names the refresh token it replaces, a write whose
 *   outcome is unknown is settled by re-reading the store first, and tokens the store has moved past are dropped.
 * - Every store call and `onTokens` is bounded in time; the manager recovers when the store does.
 * - A store that lost acknowledged writes (empty, or back to tokens the process has seen replaced) gets the newest
 *   tokens this manager holds written back instead of a `no_tokens` error. After a refresh saved inside the store's
 *   lock, the store is read once more 2 s later, so that processes that waited for it and found the store emptied
 *   (who hold tokens that may be rotated out, and fail rather than use them) recover within seconds.
 * - On `invalid_grant` the store is re-read first: if another process rotated the tokens meanwhile, those are
 *   used; `ReauthorizationRequiredError` is thrown only when the stored refresh token is the one refused.
 *   Tokens are never deleted.
 *
 * @example
 * const manager = new TokenManager({ oauth, store: new MemoryTokenStore(savedTokens), onTokens: save })
 * const token = await manager.getAccessToken()
 * await fetch(url, { headers: { authorization: `Bearer ${token}` } })
 */
export class TokenManager implements AccessTokenProvider {
  /** How long before expiry a token is refreshed, in ms. */
  readonly refreshMarginMs: number;
  readonly #oauth: TokenRefresher;
  readonly #store: TokenStore;
  readonly #onTokens: ((tokens: TokenSet) => void | Promise<void>) | undefined;
  readonly #storeTimeoutMs: number;
  readonly #lockTimeoutMs: number;
  readonly #userId: string | undefined;
  /** The last TokenSet read from or written to the store: the hot path reads only this and `#freshUntil`. */
  #cached: TokenSet | undefined;
  /** Until when (epoch ms) `#cached` is handed out without a refresh. */
  #freshUntil = 0;
  /** The newest flight; later flights chain after it, so one manager never runs two refreshes at once. */
  #flight: Flight | undefined;
  /** Refreshed tokens whose saving failed or timed out; settled before anything else is written or handed out. */
  #pending: Pending | undefined;
  /** The newest tokens this manager has read from the store or written to it: written back if the store loses them. */
  #seen: TokenSet | undefined;
  /** Set while another process held the lock since `#seen` was read: it may have replaced them. */
  #contested = false;

  constructor(options: TokenManagerOptions) {
    options = checkOptions(options ?? {}, TOKEN_MANAGER_OPTIONS, 'new TokenManager()');
    if (typeof options.oauth?.refresh !== 'function') {
      invalidOption('oauth', 'must be an OAuthClient (anything with refresh(tokens)).');
    }
    const store = options.store ?? new MemoryTokenStore();
    if (typeof store.get !== 'function' || typeof store.set !== 'function') {
      invalidOption('store', 'must implement get() and set(tokens) (see TokenStore).');
    }
    optionalFunction(options.onTokens, 'onTokens');
    this.refreshMarginMs = milliseconds(options.refreshMarginMs, 'refreshMarginMs', DEFAULT_REFRESH_MARGIN_MS, 0);
    this.#storeTimeoutMs = milliseconds(options.storeTimeoutMs, 'storeTimeoutMs', DEFAULT_STORE_TIMEOUT_MS, 1);
    this.#lockTimeoutMs = milliseconds(options.lockTimeoutMs, 'lockTimeoutMs', DEFAULT_LOCK_TIMEOUT_MS, 1);
    this.#oauth = options.oauth;
    this.#store = store;
    this.#onTokens = options.onTokens;
    this.#userId = options.userId;
    // Shown by console.log / util.inspect: the margin and the expiry, never a token.
    inspectAs(this, () => `TokenManager { refreshMarginMs: ${this.refreshMarginMs}, ${describeTokens(this.#cached)} }`);
  }

  /**
   * An access token valid for at least `refreshMarginMs`, refreshed first when needed.
   * Throws `ReauthorizationRequiredError` when the user must authorize again.
   *
   * @example
   * const token = await manager.getAccessToken()
   */
  getAccessToken(): Promise<string> {
    const cached = this.#cached;
    // Hot path: a clock read and a comparison, no await on I/O, no timer.
    if (cached !== undefined && Date.now() < this.#freshUntil) return Promise.resolve(cached.accessToken);
    return (this.#flight ?? this.#startFlight(undefined)).promise.then((tokens) => tokens.accessToken);
  }

  /**
   * The access token at once, without a promise, when the cached one is fresh; `undefined` when a call to
   * `getAccessToken()` would have to wait (a refresh, a store read). The request pipeline takes this path first.
   *
   * @example
   * const token = manager.peekAccessToken() ?? (await manager.getAccessToken())
   */
  peekAccessToken(): string | undefined {
    const cached = this.#cached;
    return cached !== undefined && Date.now() < this.#freshUntil ? cached.accessToken : undefined;
  }

  /**
   * For the "401 → refresh once → retry once" rule: returns an access token other than `rejectedAccessToken`.
   * When the cache or the store already holds a newer fresh token (another request or process refreshed
   * first), it is returned without a new refresh; concurrent calls for the same rejected token share one refresh.
   *
   * @example
   * if (response.status === 401) token = await manager.forceRefresh(token)
   */
  forceRefresh(rejectedAccessToken: string): Promise<string> {
    if (typeof rejectedAccessToken !== 'string') {
      return Promise.reject(new ValidationError('forceRefresh() needs the access token the service rejected.', ['rejectedAccessToken']));
    }
    const cached = this.#cached;
    if (cached !== undefined && cached.accessToken !== rejectedAccessToken && Date.now() < this.#freshUntil) {
      return Promise.resolve(cached.accessToken);
    }
    const flight = this.#flight?.forcing === rejectedAccessToken ? this.#flight : this.#startFlight(rejectedAccessToken);
    return flight.promise.then((tokens) => tokens.accessToken);
  }

  /**
   * Stores the tokens from `oauth.exchangeCode()` (or from your database) and uses them from now on.
   * Waits for a refresh in progress first, so that refresh cannot overwrite these tokens.
   *
   * @example
   * await manager.setTokens(await oauth.exchangeCode(callbackUrl, session.oauth))
   */
  async setTokens(tokens: TokenSet): Promise<void> {
    const problem = tokenSetProblem(tokens)?.problem ?? (this.#isOthers(tokens) ? "is stamped with another user's id (`userId`)" : undefined);
    if (problem !== undefined) invalidOption('tokens', `${problem}: pass the TokenSet from exchangeCode() to setTokens().`);
    const copy = this.#stamp(tokens);
    await this.#flight?.promise.then(noop, noop);
    // A new sign-in replaces whatever is stored: no compare-and-set.
    await this.#call('set', () => this.#store.set(copy), copy);
    this.#pending = undefined;
    this.#adopt(copy);
  }

  /**
   * @internal Whether tokens this manager obtained wait to be saved (their `store.set` or `onTokens` failed): they
   * exist nowhere else, so `UserClients` keeps the manager until they are saved.
   */
  get unsaved(): boolean {
    return this.#pending !== undefined;
  }

  /**
   * @internal Saves the tokens `unsaved` speaks of now, after any refresh in flight (each store call and `onTokens`
   * bounded by `storeTimeoutMs`); rejects with the `TokenStoreError` when they still cannot be saved.
   */
  async saveUnsaved(): Promise<void> {
    await this.#flight?.promise.then(noop, noop);
    await this.#settlePending();
  }

  /** The current TokenSet, as the store holds it (`undefined` before `setTokens`). Treat it as a password. */
  async getTokens(): Promise<TokenSet | undefined> {
    const pending = this.#pending;
    const stored = await this.#read(pending?.tokens);
    // Tokens whose save did not complete are the newest, unless the store has moved past them since (another
    // process rotated): then the store's are, and handing out the pending ones could write them back over newer.
    if (pending === undefined || (stored !== undefined && !sameTokens(stored, pending.tokens) && stored.refreshToken !== pending.expected)) {
      return stored;
    }
    return copyTokenSet(pending.tokens); // the caller may change what it gets: not the tokens still to be saved
  }

  #startFlight(forcing: string | undefined): Flight {
    const previous = this.#flight?.promise;
    const run = () => this.#obtain(forcing);
    // Chained after the running flight (whatever its outcome), which it will then see in the store.
    const promise = previous === undefined ? run() : previous.then(run, run);
    const flight: Flight = { promise, forcing };
    this.#flight = flight;
    // Clearing on both outcomes is what keeps a failed refresh from being handed to later callers.
    const clear = () => {
      if (this.#flight === flight) this.#flight = undefined;
    };
    promise.then(clear, clear);
    return flight;
  }

  /**
   * One read of the store, and a refresh only when what it holds will not do: inside the store's lock when it has
   * one, so a still-valid token costs one read and never the lock.
   */
  async #obtain(forcing: string | undefined): Promise<TokenSet> {
    await this.#settlePending();
    const stored = await this.#current();
    if (this.#isUsable(stored, forcing)) return this.#adopt(stored);
    if (this.#store.lock === undefined) return this.#refresh(stored, forcing, false, false);
    return this.#withLock(
      () => this.#lockedRefresh(forcing),
      (current) => this.#useHolders(stored, this.#checked(current), forcing),
    );
  }

  /**
   * Inside the store's lock: another process holding it may be refreshing right now. Waiting for the lock is
   * bounded by `lockTimeoutMs`; a lock granted after the manager gave up runs nothing. Once the refresh inside it is
   * done, the lock's own settling (its release) is awaited at most `storeTimeoutMs`: the refresh's outcome then
   * stands, so a store whose release hangs cannot hang this manager. `whileWaiting` goes to the store (see
   * `TokenStoreLockOptions`): a store that watches its tokens ends the wait with the holder's result.
   */
  async #withLock(fn: () => Promise<TokenSet>, whileWaiting: (stored: TokenSet | undefined) => TokenSet | undefined): Promise<TokenSet> {
    const store = this.#store;
    let abandoned = false;
    let finished = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let cutOff!: (outcome: Promise<TokenSet>) => void;
    const cutOffWait = new Promise<TokenSet>((resolve) => (cutOff = resolve));
    cutOffWait.catch(noop);
    timer = setTimeout(() => {
      abandoned = true;
      cutOff(Promise.reject(new TokenStoreError('lock', new Error(`the lock was not granted within ${this.#lockTimeoutMs} ms`))));
    }, this.#lockTimeoutMs);
    const locked = (async () => {
      try {
        return await store.lock!(
          async () => {
            if (abandoned) throw new TokenStoreError('lock', new Error('the lock was granted after the manager gave up waiting'));
            clearTimeout(timer);
            const outcome = fn();
            const releaseWait = () => {
              if (!finished) timer = setTimeout(() => cutOff(outcome), this.#storeTimeoutMs);
            };
            outcome.then(releaseWait, releaseWait);
            return outcome;
          },
          { whileWaiting: (stored) => (abandoned ? undefined : whileWaiting(stored)) },
        );
      } catch (error) {
        throw error instanceof PostSchedError ? error : new TokenStoreError('lock', error);
      }
    })();
    try {
      return await Promise.race([locked, cutOffWait]);
    } finally {
      finished = true;
      clearTimeout(timer);
    }
  }

  /** Inside the lock: read again (another process may have refreshed since), then refresh if still needed. */
  async #lockedRefresh(forcing: string | undefined): Promise<TokenSet> {
    const stored = await this.#current();
    if (this.#isUsable(stored, forcing)) return this.#adopt(stored);
    return this.#refresh(stored, forcing, false, true);
  }

  /**
   * While another process holds the lock, with what the store holds at each look: that process's refreshed tokens
   * once they are stored, else `undefined` (go on waiting).
   */
  #useHolders(seen: TokenSet, stored: TokenSet | undefined, forcing: string | undefined): TokenSet | undefined {
    // Another process may be replacing `seen`: should the store now lose its data, `seen` is no longer written back.
    this.#contested = true;
    if (stored === undefined || sameTokens(stored, seen)) return undefined;
    recordRotation(this.#oauth, seen, stored, 'observed');
    if (newestKnown(this.#oauth, stored) !== stored || !this.#isUsable(stored, forcing)) return undefined;
    return this.#adopt(stored);
  }

  /**
   * What the store holds, as the newest tokens this process knows. When the store lost acknowledged writes (it holds
   * nothing, or tokens this process has seen replaced), the newest tokens the manager holds are written back
   * (compare-and-set) instead of failing, and a replaced refresh token is never used.
   */
  async #current(refusals = 0): Promise<TokenSet> {
    const stored = await this.#read();
    const seen = this.#seen;
    // The store moved on from what this manager saw last: remembered, should the store later go back to it.
    if (seen !== undefined && stored !== undefined && !sameTokens(seen, stored)) recordRotation(this.#oauth, seen, stored, 'observed');
    const held = stored ?? (this.#contested ? undefined : seen);
    if (held === undefined) {
      if (seen === undefined) throw new ReauthorizationRequiredError('no_tokens');
      // The store emptied while another process was refreshing the tokens this manager holds: that process holds
      // the newer ones and writes them back; these may be rotated out, so they are neither written nor refreshed.
      throw new TokenStoreError('get', new Error('the store lost the tokens while another process was refreshing them; that process writes its tokens back: try again'));
    }
    const newest = newestKnown(this.#oauth, held);
    if (newest === stored) {
      this.#see(stored);
      return stored;
    }
    // Writes refused again and again while the store stays behind: it does not honour expectedRefreshToken (or lies).
    if (refusals > 2) throw new TokenStoreError('set', new Error('set() keeps refusing the write (false) while get() holds older tokens or none'));
    return this.#save({ tokens: this.#stamp(newest), expected: stored?.refreshToken ?? newest.refreshToken, startedAt: undefined }, false, refusals);
  }

  async #refresh(stored: TokenSet, forcing: string | undefined, isRetry: boolean, locked: boolean): Promise<TokenSet> {
    if (stored.refreshToken === undefined) throw new ReauthorizationRequiredError('no_refresh_token');
    const startedAt = Date.now();
    let fresh: TokenSet;
    try {
      // Shared with every manager of the process holding this refresh token; never sent once seen replaced.
      fresh = await refreshOnce(this.#oauth, stored);
    } catch (error) {
      if (!(error instanceof ReauthorizationRequiredError)) throw error;
      // Assumptions (refresh token lifetime): re-read before concluding. If someone stored other tokens while
      // this refresh was in flight, the refused refresh token is simply stale: use theirs.
      const current = await this.#read(stored);
      if (current === undefined) throw error;
      if (current.refreshToken === stored.refreshToken) {
        await this.#markRefused(error, current);
        throw error;
      }
      recordRotation(this.#oauth, stored, current, 'observed');
      if (this.#isUsable(current, forcing)) return this.#adopt(current);
      if (isRetry) throw error;
      return this.#refresh(current, forcing, true, locked);
    }
    return this.#save({ tokens: this.#stamp(fresh), expected: stored.refreshToken, startedAt }, locked);
  }

  /** Tells a store that records it (`TokenStore.markReauthorizationRequired`) that these tokens were refused; best effort. */
  async #markRefused(error: ReauthorizationRequiredError, refused: TokenSet): Promise<void> {
    const store = this.#store;
    if (typeof store.markReauthorizationRequired !== 'function') return;
    await this.#call('set', () => store.markReauthorizationRequired!(error.reason, refused), refused).catch(noop);
  }

  /**
   * store.set (a compare-and-set on the refresh token replaced), then onTokens, both awaited: a rotated refresh
   * token is saved before the access token is used. A refused write means the store moved on: its tokens are used.
   * `locked`: inside the store's lock, a save whose outcome is unknown is tried again (a repeated compare-and-set is
   * harmless) for up to `storeTimeoutMs` before the lock is given up, so no other process refreshes from the store
   * while the newest tokens are unsaved.
   */
  async #save(pending: Pending, locked: boolean, refusals = 0): Promise<TokenSet> {
    const { tokens, expected } = pending;
    const deadline = Date.now() + this.#storeTimeoutMs;
    let written: void | boolean;
    for (let attempt = 0; ; attempt++) {
      try {
        written = await this.#call('set', () => this.#store.set(tokens, { expectedRefreshToken: expected }), tokens);
        break;
      } catch (error) {
        const wait = Math.min(1_000, 25 * 2 ** attempt);
        if (!locked || Date.now() + wait >= deadline) {
          this.#pending = pending; // the write may still land: settled by re-reading before anything else is written
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
    if (written === false) return this.#useStored(refusals + 1);
    this.#see(tokens);
    if (locked && pending.startedAt !== undefined) this.#recheck(tokens);
    await this.#notify(pending);
    return this.#adopt(tokens, pending.startedAt);
  }

  /**
   * `RECHECK_AFTER_MS` after saving `tokens` inside the lock, a flight as a call makes (which writes them back if the
   * store lost them): only while they are still the newest this manager holds and no flight runs (it reads the store
   * anyway). On a timer that does not keep the process alive; a failure is left to the next call.
   */
  #recheck(tokens: TokenSet): void {
    const timer = setTimeout(() => {
      if (this.#seen !== undefined && sameTokens(this.#seen, tokens)) (this.#flight ?? this.#startFlight(undefined)).promise.catch(noop);
    }, RECHECK_AFTER_MS);
    (timer as { unref?: () => void }).unref?.();
  }

  /** onTokens for tokens the store holds; a failure leaves them pending (the call is made again first thing). */
  async #notify(pending: Pending): Promise<void> {
    if (this.#onTokens === undefined) return;
    try {
      await this.#call('onTokens', async () => this.#onTokens?.(pending.tokens), pending.tokens);
    } catch (error) {
      this.#pending = pending;
      throw error;
    }
  }

  /**
   * Finishes saving tokens whose `set` or `onTokens` failed, deciding from what the store holds now, never from
   * what the manager remembers: the write landed (only onTokens is left), it did not (the store still holds the
   * refresh token they replace, or nothing: write again), or the store has moved on (drop them).
   */
  async #settlePending(): Promise<void> {
    const pending = this.#pending;
    if (pending === undefined) return;
    const current = await this.#read(pending.tokens);
    this.#pending = undefined;
    if (current !== undefined && sameTokens(current, pending.tokens)) {
      this.#see(pending.tokens);
      await this.#notify(pending);
      this.#adopt(pending.tokens, pending.startedAt);
    } else if (current === undefined || current.refreshToken === pending.expected) {
      await this.#save(pending, false);
    }
  }

  /** After a refused write: the store's tokens, which are newer than ours. */
  async #useStored(refusals: number): Promise<TokenSet> {
    return this.#adopt(await this.#current(refusals));
  }

  /**
   * Remembers the newest tokens this manager has read or written (what it writes back should the store lose them),
   * and tells the process's rotation memory that a store holds them.
   */
  #see(tokens: TokenSet): void {
    this.#seen = tokens;
    this.#contested = false;
    recordStored(this.#oauth, tokens);
  }

  /**
   * Makes `tokens` (which the store holds) the cached set. `obtainedAt`: when this manager's refresh that got them started; such a token is
   * refreshed at most half its lifetime early, and used for at least `MIN_REFRESH_INTERVAL_MS`.
   */
  #adopt(tokens: TokenSet, obtainedAt?: number): TokenSet {
    const previous = this.#cached;
    if (obtainedAt !== undefined) {
      const margin = Math.min(this.refreshMarginMs, Math.max(0, tokens.expiresAt - obtainedAt) / 2);
      this.#freshUntil = Math.max(tokens.expiresAt - margin, Date.now() + MIN_REFRESH_INTERVAL_MS);
    } else if (previous === undefined || !sameTokens(previous, tokens)) {
      this.#freshUntil = tokens.expiresAt - this.refreshMarginMs;
    }
    this.#cached = tokens;
    this.#see(tokens);
    return tokens;
  }

  #isUsable(tokens: TokenSet, forcing: string | undefined): boolean {
    if (tokens.accessToken === forcing) return false;
    const cached = this.#cached;
    const freshUntil = cached !== undefined && sameTokens(cached, tokens) ? this.#freshUntil : tokens.expiresAt - this.refreshMarginMs;
    return Date.now() < freshUntil;
  }

  /** `store.get()`, bounded, and checked (see `#checked`). */
  async #read(involved?: TokenSet): Promise<TokenSet | undefined> {
    return this.#checked(await this.#call('get', () => this.#store.get(), involved));
  }

  /**
   * What the store holds (read, or shown while waiting for its lock), checked: anything but a TokenSet or `undefined`,
   * or a TokenSet stamped with another user's id, is a `TokenStoreError`; such tokens are never used or written.
   */
  #checked(stored: unknown): TokenSet | undefined {
    if (stored === undefined) return undefined;
    const problem =
      stored === null
        ? 'returned null; return undefined when no tokens are stored'
        : (tokenSetProblem(stored)?.problem ??
          (this.#isOthers(stored as TokenSet) ? "returned another user's tokens (another `userId`): a user's store must read only that user's key" : undefined));
    if (problem !== undefined) throw new TokenStoreError('get', new TypeError(`get() ${problem.replace(/^(is|has)/, 'returned a value that $1')}`));
    return stored as TokenSet;
  }

  /** Whether `tokens` are stamped with a user other than this manager's (unstamped tokens, stored before, are not). */
  #isOthers(tokens: TokenSet): boolean {
    return this.#userId !== undefined && tokens.userId !== undefined && tokens.userId !== this.#userId;
  }

  /** A copy of `tokens` to write, stamped with this manager's user, if it has one. */
  #stamp(tokens: TokenSet): TokenSet {
    const stamped = copyTokenSet(tokens);
    if (this.#userId !== undefined) stamped.userId = this.#userId;
    return stamped;
  }

  /**
   * Calls the store or callback, bounded by `storeTimeoutMs`; foreign errors are wrapped, never attached (they
   * may hold the tokens).
   */
  async #call<T>(operation: TokenStoreOperation, fn: () => Promise<T>, involved?: TokenSet): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        fn(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${this.#storeTimeoutMs} ms (storeTimeoutMs); the next call tries again`)),
            this.#storeTimeoutMs,
          );
        }),
      ]);
    } catch (error) {
      // The SDK's own errors (RedisTokenStore's TokenStoreUnavailableError, …) are typed and secret-free: keep them.
      if (error instanceof PostSchedError) throw error;
      const known = [involved, this.#cached, this.#pending?.tokens].flatMap((t) => (t === undefined ? [] : [t.accessToken, t.refreshToken ?? '']));
      throw new TokenStoreError(operation, error, known);
    } finally {
      clearTimeout(timer);
    }
  }

  /** What `JSON.stringify` shows: the settings, never a token. */
  toJSON(): {
    /** The refresh margin, in ms. */
    refreshMarginMs: number;
  } {
    return { refreshMarginMs: this.refreshMarginMs };
  }
}

function noop(): void {}

function milliseconds(value: unknown, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > 2_147_483_647) {
    invalidOption(name, `must be a number of milliseconds from ${min} to 2147483647.`);
  }
  return value;
}

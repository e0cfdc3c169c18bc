/**
 * Keeps one user's access token valid: a cache read when it is fresh, one shared refresh when it is not.
 */
import { FreshToken } from './fresh-token.js';
import { inspectAs } from './inspect.js';
import { MemoryTokenStore } from './memory-token-store.js';
import { TokenRefresh } from './token-refresh.js';
import { TokenStoreAdapter } from './token-store-adapter.js';
import { describeTokens, tokenSetProblem } from './token-set.js';
import type { ReauthorizationReason, ReauthorizationRequiredError } from './errors.js';
import type { AccessTokenProvider, StoredGrant, TokenRefresher, TokenSet, TokenStore } from './types.js';
import { checkOptions, integerOption, invalidOption, MAX_TIMEOUT_MS, optionalFunction, optionNames, refusal } from '../core/invalid-option.js';

/** Refresh this long before expiry, so a token handed out stays valid through the request that uses it. */
const DEFAULT_REFRESH_MARGIN_MS = 60_000;
/** Longest wait for one `store.get` / `store.set` / `onTokens` before the manager gives up on it. */
const DEFAULT_STORE_TIMEOUT_MS = 10_000;
/** Longest wait for `store.lock` to start running the refresh (above RedisTokenStore's 45 s `lockWaitMs`). */
const DEFAULT_LOCK_TIMEOUT_MS = 60_000;

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
   * How long before `expiresAt` a token counts as expired and is refreshed, in ms. Default 60 000. It is at most half
   * the token's lifetime, counted from when this manager obtained it or first read it from the store (a 30 s token is
   * used for 15 s, not refreshed on every call of every process).
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
   * inside the store's lock, a save of refreshed tokens is tried again for up to this long before the call fails, and
   * then on, the lock kept, until it lands (no other process refreshes with the refresh token it replaced). Default
   * 10 000.
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
  /**
   * @internal Called when the service refused the refresh token and this manager's mark of the dead grant was the
   * one the store took (`TokenStore.markReauthorizationRequired` returned `true`): `UserClients` reports it then, once
   * across the processes sharing the store.
   */
  onMarked?: (error: ReauthorizationRequiredError) => void;
}

const TOKEN_MANAGER_OPTIONS = /* @__PURE__ */ optionNames<TokenManagerOptions>({ oauth: 0, store: 0, refreshMarginMs: 0, onTokens: 0, storeTimeoutMs: 0, lockTimeoutMs: 0, userId: 0, onMarked: 0 });

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
  /** How long before expiry a token is refreshed, in ms (set by the constructor: `declare`, no field initializer emitted). */
  declare readonly refreshMarginMs: number;
  /** The token handed out and until when: all the hot path reads. */
  readonly #fresh: FreshToken;
  /** The store's calls, bounded and checked (no state). */
  readonly #store: TokenStoreAdapter;
  /** The refresh, one sequence: the store reads and refreshes in progress, one at a time, and the tokens still to save. */
  readonly #refresh: TokenRefresh;

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
    this.refreshMarginMs = integerOption(options.refreshMarginMs, 'refreshMarginMs', DEFAULT_REFRESH_MARGIN_MS, 0, MAX_TIMEOUT_MS);
    const storeTimeoutMs = integerOption(options.storeTimeoutMs, 'storeTimeoutMs', DEFAULT_STORE_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
    const lockTimeoutMs = integerOption(options.lockTimeoutMs, 'lockTimeoutMs', DEFAULT_LOCK_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
    const { oauth, onTokens, userId, onMarked } = options;
    const fresh = (this.#fresh = new FreshToken(this.refreshMarginMs));
    const adapter = (this.#store = new TokenStoreAdapter({ store, onTokens, storeTimeoutMs, userId }));
    this.#refresh = new TokenRefresh({ oauth, store: adapter, fresh, lockTimeoutMs, storeTimeoutMs, onMarked });
    // Shown by console.log / util.inspect: the margin and the expiry, never a token.
    inspectAs(this, () => `TokenManager { refreshMarginMs: ${this.refreshMarginMs}, ${describeTokens(this.#fresh.tokens)} }`);
  }

  /**
   * An access token valid for at least `refreshMarginMs`, refreshed first when needed.
   * Throws `ReauthorizationRequiredError` when the user must authorize again.
   *
   * @example
   * const token = await manager.getAccessToken()
   */
  getAccessToken(): Promise<string> {
    // Hot path: a clock read and a comparison, no await on I/O, no timer.
    const token = this.#fresh.peek();
    if (token !== undefined) return Promise.resolve(token);
    // Else the flight in progress (a store read, and a refresh when what the store holds will not do), or a new one.
    return this.#refresh.join().then(accessTokenOf);
  }

  /**
   * The access token at once, without a promise, when the cached one is fresh; `undefined` when a call to
   * `getAccessToken()` would have to wait (a refresh, a store read). The request pipeline takes this path first.
   *
   * @example
   * const token = manager.peekAccessToken() ?? (await manager.getAccessToken())
   */
  peekAccessToken(): string | undefined {
    return this.#fresh.peek();
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
      return Promise.reject(refusal('forceRefresh() needs the access token the service rejected.', ['rejectedAccessToken']));
    }
    const token = this.#fresh.peek(rejectedAccessToken);
    if (token !== undefined) return Promise.resolve(token);
    return this.#refresh.force(rejectedAccessToken).then(accessTokenOf);
  }

  /**
   * Stores the tokens from `oauth.exchangeCode()` (or from your database) and uses them from now on.
   * Waits for a refresh in progress first, so that refresh cannot overwrite these tokens.
   *
   * @example
   * await manager.setTokens(await oauth.exchangeCode(callbackUrl, session.oauth))
   */
  async setTokens(tokens: TokenSet): Promise<void> {
    const problem = tokenSetProblem(tokens) ?? (this.#store.isOthers(tokens) ? "is stamped with another user's id (`userId`)" : undefined);
    if (problem !== undefined) invalidOption('tokens', `${problem}: pass the TokenSet from exchangeCode() to setTokens().`);
    const stamped = this.#store.stamp(tokens);
    await this.#refresh.settled();
    // A new sign-in replaces whatever is stored: no compare-and-set.
    await this.#refresh.replace(stamped);
  }

  /**
   * @internal Whether tokens this manager obtained wait to be saved (their `store.set` or `onTokens` failed): they
   * exist nowhere else, so `UserClients` keeps the manager until they are saved.
   */
  get unsaved(): boolean {
    return this.#refresh.unsaved;
  }

  /**
   * @internal Saves the tokens `unsaved` speaks of now, after any refresh in flight (each store call and `onTokens`
   * bounded by `storeTimeoutMs`); rejects with the `TokenStoreError` when they still cannot be saved.
   */
  async saveUnsaved(): Promise<void> {
    await this.#refresh.settled();
    await this.#refresh.settlePending();
  }

  /** @internal Whether the store marks dead grants (see `TokenStore.getGrant`): then reported once across processes. */
  get marks(): boolean {
    return this.#store.marks;
  }

  /**
   * @internal The store's grant (tokens, mark, when written), and why this process saw the held refresh token refused,
   * if it did (`users.grantStatus`).
   */
  grant(): Promise<StoredGrant & { refused?: ReauthorizationReason | undefined }> {
    return this.#refresh.grant();
  }

  /** @internal Removes the tokens from the store (`TokenStore.delete`) and from this manager (`users.disconnect`). */
  removeTokens(): Promise<void> {
    return this.#refresh.remove();
  }

  /** The current TokenSet, as the store holds it (`undefined` before `setTokens`). Treat it as a password. */
  async getTokens(): Promise<TokenSet | undefined> {
    return this.#refresh.snapshot();
  }

  /** What `JSON.stringify` shows: the settings, never a token. */
  toJSON(): {
    /** The refresh margin, in ms. */
    refreshMarginMs: number;
  } {
    return { refreshMarginMs: this.refreshMarginMs };
  }
}

function accessTokenOf(tokens: TokenSet): string {
  return tokens.accessToken;
}

/**
 * Keeps one user's access token valid: a cache read when it is fresh, one shared refresh when it is not.
 */
import { PostSchedError } from '../base-error.js';
import { ValidationError } from '../errors.js';
import { ReauthorizationRequiredError, TokenStoreError, type TokenStoreOperation } from './errors.js';
import { inspectAs } from './inspect.js';
import { describeTokens, MemoryTokenStore } from './memory-token-store.js';
import type { AccessTokenProvider, TokenSet, TokenStore } from './types.js';
import { invalidOption } from '../invalid-option.js';

/** Refresh this long before expiry, so a token handed out stays valid through the request that uses it. */
const DEFAULT_REFRESH_MARGIN_MS = 60_000;

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
   * should implement `lock`, so only one of them refreshes and the others use its result.
   */
  store?: TokenStore;
  /** How long before `expiresAt` a token counts as expired and is refreshed, in ms. Default 60 000. */
  refreshMarginMs?: number;
  /**
   * Called with every TokenSet the manager obtains by refreshing, after `store.set` and before the new access
   * token is handed to anyone, and awaited: persist the (possibly rotated) refresh token here. If it throws,
   * the caller gets a `TokenStoreError` and the tokens are saved again before the next use.
   *
   * @example
   * onTokens: (tokens) => db.users.update(userId, { tokens: JSON.stringify(tokens) })
   */
  onTokens?: (tokens: TokenSet) => void | Promise<void>;
}

/** One refresh (or store re-read) in progress; `forcing` is the access token the service rejected, if any. */
interface Flight {
  readonly promise: Promise<TokenSet>;
  readonly forcing: string | undefined;
}

/**
 * Hands out valid access tokens for one user, refreshing them as needed.
 *
 * - A fresh cached token is returned without any I/O.
 * - Concurrent callers share one refresh; a failed refresh is not cached, the next call tries again.
 * - A refreshed TokenSet is saved (`store.set`, then `onTokens`) before anyone gets the new access token.
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
  /** The last TokenSet read from or written to the store: the hot path reads only this. */
  #cached: TokenSet | undefined;
  /** The newest flight; later flights chain after it, so one manager never runs two refreshes at once. */
  #flight: Flight | undefined;
  /** Refreshed tokens whose saving failed; they are saved again before any further use. */
  #unsaved: TokenSet | undefined;

  constructor(options: TokenManagerOptions) {
    if (typeof options?.oauth?.refresh !== 'function') {
      invalidOption('oauth', 'must be an OAuthClient (anything with refresh(tokens)).');
    }
    const margin = options.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS;
    if (typeof margin !== 'number' || !Number.isFinite(margin) || margin < 0) {
      invalidOption('refreshMarginMs', 'must be a number of milliseconds, 0 or more.');
    }
    const store = options.store ?? new MemoryTokenStore();
    if (typeof store.get !== 'function' || typeof store.set !== 'function') {
      invalidOption('store', 'must implement get() and set(tokens) (see TokenStore).');
    }
    if (options.onTokens !== undefined && typeof options.onTokens !== 'function') {
      invalidOption('onTokens', 'must be a function.');
    }
    this.refreshMarginMs = margin;
    this.#oauth = options.oauth;
    this.#store = store;
    this.#onTokens = options.onTokens;
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
    if (cached !== undefined && this.#isFresh(cached)) return Promise.resolve(cached.accessToken);
    return (this.#flight ?? this.#startFlight(undefined)).promise.then((tokens) => tokens.accessToken);
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
    if (cached !== undefined && cached.accessToken !== rejectedAccessToken && this.#isFresh(cached)) {
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
    checkTokenSet(tokens);
    const copy: TokenSet = { ...tokens, scopes: [...tokens.scopes] };
    await this.#flight?.promise.then(noop, noop);
    await this.#call('set', () => this.#store.set(copy), copy);
    this.#unsaved = undefined;
    this.#cached = copy;
  }

  /** The current TokenSet, as the store holds it (`undefined` before `setTokens`). Treat it as a password. */
  async getTokens(): Promise<TokenSet | undefined> {
    return this.#unsaved ?? (await this.#call('get', () => this.#store.get()));
  }

  #isFresh(tokens: TokenSet): boolean {
    return Date.now() < tokens.expiresAt - this.refreshMarginMs;
  }

  #startFlight(forcing: string | undefined): Flight {
    const previous = this.#flight?.promise;
    const run = () => this.#withLock(() => this.#loadOrRefresh(forcing));
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

  /** Inside the store's lock when it has one: another process holding it may be refreshing right now. */
  async #withLock(fn: () => Promise<TokenSet>): Promise<TokenSet> {
    if (this.#store.lock === undefined) return fn();
    try {
      return await this.#store.lock(fn);
    } catch (error) {
      throw error instanceof PostSchedError ? error : new TokenStoreError('lock', error);
    }
  }

  async #loadOrRefresh(forcing: string | undefined): Promise<TokenSet> {
    const unsaved = this.#unsaved;
    if (unsaved !== undefined) {
      await this.#save(unsaved);
      this.#unsaved = undefined;
    }
    // Re-read: another process (or manager) sharing the store may have refreshed since our last look.
    const stored = await this.#call('get', () => this.#store.get());
    if (stored === undefined) throw new ReauthorizationRequiredError('no_tokens');
    if (this.#isUsable(stored, forcing)) {
      this.#cached = stored;
      return stored;
    }
    return this.#refresh(stored, forcing, false);
  }

  async #refresh(stored: TokenSet, forcing: string | undefined, isRetry: boolean): Promise<TokenSet> {
    if (stored.refreshToken === undefined) throw new ReauthorizationRequiredError('no_refresh_token');
    let fresh: TokenSet;
    try {
      fresh = await this.#oauth.refresh(stored);
    } catch (error) {
      if (!(error instanceof ReauthorizationRequiredError)) throw error;
      // Assumptions (refresh token lifetime): re-read before concluding. If someone stored other tokens while
      // this refresh was in flight, the refused refresh token is simply stale: use theirs.
      const current = await this.#call('get', () => this.#store.get(), stored);
      if (current === undefined || current.refreshToken === stored.refreshToken) throw error;
      if (this.#isUsable(current, forcing)) {
        this.#cached = current;
        return current;
      }
      if (isRetry) throw error;
      return this.#refresh(current, forcing, true);
    }
    await this.#save(fresh);
    this.#cached = fresh;
    return fresh;
  }

  /** store.set, then onTokens, both awaited: a rotated refresh token is saved before the access token is used. */
  async #save(tokens: TokenSet): Promise<void> {
    try {
      await this.#call('set', () => this.#store.set(tokens), tokens);
      if (this.#onTokens !== undefined) await this.#call('onTokens', async () => this.#onTokens?.(tokens), tokens);
    } catch (error) {
      this.#unsaved = tokens;
      throw error;
    }
  }

  #isUsable(tokens: TokenSet, forcing: string | undefined): boolean {
    return tokens.accessToken !== forcing && this.#isFresh(tokens);
  }

  /** Calls the store or callback; foreign errors are wrapped, never attached (they may hold the tokens). */
  async #call<T>(operation: TokenStoreOperation, fn: () => Promise<T>, involved?: TokenSet): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      // The SDK's own errors (RedisTokenStore's TokenStoreUnavailableError, …) are typed and secret-free: keep them.
      if (error instanceof PostSchedError) throw error;
      const known = [involved, this.#cached, this.#unsaved].flatMap((t) => (t === undefined ? [] : [t.accessToken, t.refreshToken ?? '']));
      throw new TokenStoreError(operation, error, known);
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

/** Enough of a TokenSet check that a wrong object fails here, not at the first API call. Values are never echoed. */
function checkTokenSet(tokens: unknown): asserts tokens is TokenSet {
  const t = tokens as Partial<Record<keyof TokenSet, unknown>> | null;
  const problem =
    typeof t !== 'object' || t === null
      ? 'is not an object'
      : typeof t.accessToken !== 'string' || t.accessToken === ''
        ? 'has no accessToken string'
        : t.refreshToken !== undefined && typeof t.refreshToken !== 'string'
          ? 'has a refreshToken that is not a string'
          : typeof t.expiresAt !== 'number' || !Number.isFinite(t.expiresAt)
            ? 'has no numeric expiresAt (epoch ms)'
            : !Array.isArray(t.scopes) || !t.scopes.every((s) => typeof s === 'string')
              ? 'has no scopes array of strings'
              : t.tokenType !== 'bearer'
                ? "has a tokenType other than 'bearer'"
                : undefined;
  if (problem !== undefined) {
    invalidOption('tokens', `${problem}: pass the TokenSet from exchangeCode() to setTokens().`);
  }
}

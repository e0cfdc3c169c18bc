/**
 * The token manager's coordinator: one flight at a time per manager (a store read, and a refresh when what it holds
 * will not do), the refresh inside the store's lock when it has one, and one refresh per refresh token across the
 * managers of the process (`refreshOnce`).
 */
import { PostSchedError } from '../core/base-error.js';
import { timeBound } from '../core/time-bound.js';
import { ReauthorizationRequiredError, TokenStoreError } from './errors.js';
import type { FreshToken } from './fresh-token.js';
import type { SavedTokens } from './saved-tokens.js';
import { newestKnown, recordRefused, recordRotation, refreshOnce, refusedReason } from './shared-refresh.js';
import { sameTokens } from './token-set.js';
import type { TokenRefresher, TokenSet, TokenStore } from './types.js';

/** The bound of a refresh whose refresher does not tell its own (`TokenRefresher.timeoutMs`): OAuthClient's default. */
const DEFAULT_REFRESH_BOUND_MS = 30_000;
/** The longest pause between two tries of a save inside the lock (`SavedTokens`): a live holder's next try comes sooner. */
const PENDING_SAVE_RETRY_MS = 1_000;


export interface RefreshCoordinatorOptions {
  readonly oauth: TokenRefresher;
  readonly store: TokenStore;
  readonly fresh: FreshToken;
  readonly saved: SavedTokens;
  readonly lockTimeoutMs: number;
  readonly storeTimeoutMs: number;
}

/** One flight in progress; `rejected` is the access token the service refused (`forceRefresh`), if any. */
interface Flight {
  readonly promise: Promise<TokenSet>;
  readonly rejected: string | undefined;
}

/** How a refresh came about. */
interface RefreshOptions {
  /** The access token the service refused: never handed out again. */
  readonly rejected: string | undefined;
  /** Runs inside the store's lock: its save is settled before the lock is given up. */
  readonly inLock: boolean;
  /** A second refresh, of tokens found in the store after the first was refused (`invalid_grant`): never a third. */
  readonly retried?: boolean;
}

export class RefreshCoordinator {
  readonly #options: RefreshCoordinatorOptions;
  /** The newest flight; later flights chain after it, so one manager never runs two refreshes at once. */
  #flight: Flight | undefined;

  constructor(options: RefreshCoordinatorOptions) {
    this.#options = options;
  }

  /** The flight in progress, or a new one. */
  join(): Promise<TokenSet> {
    return (this.#flight ?? this.#start(undefined)).promise;
  }

  /** Tokens other than `rejected`: the flight already forcing past it, or a new one. */
  force(rejected: string): Promise<TokenSet> {
    return (this.#flight?.rejected === rejected ? this.#flight : this.#start(rejected)).promise;
  }

  /** Resolves once the flight in progress (if any) is over, whatever its outcome. */
  async settled(): Promise<void> {
    await this.#flight?.promise.then(noop, noop);
  }

  #start(rejected: string | undefined): Flight {
    const previous = this.#flight?.promise;
    const run = () => this.#obtain(rejected);
    // Chained after the running flight (whatever its outcome), which it will then see in the store.
    const promise = previous === undefined ? run() : previous.then(run, run);
    const flight: Flight = { promise, rejected };
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
  async #obtain(rejected: string | undefined): Promise<TokenSet> {
    const { saved, fresh } = this.#options;
    await saved.settlePending();
    const stored = await saved.current();
    if (fresh.isUsable(stored, rejected)) return saved.use(stored);
    if (this.#options.store.lock === undefined) return this.#refresh(stored, { rejected, inLock: false });
    return this.#withLock(
      () => this.#refreshInLock(rejected),
      (current) => this.#useHolders(stored, saved.check(current), rejected),
    );
  }

  /** Inside the lock: read again (another process may have refreshed since), then refresh if still needed. */
  async #refreshInLock(rejected: string | undefined): Promise<TokenSet> {
    const { saved, fresh } = this.#options;
    const stored = await saved.current();
    if (fresh.isUsable(stored, rejected)) return saved.use(stored);
    return this.#refresh(stored, { rejected, inLock: true });
  }

  /** Refreshes `stored` (shared with every manager of the process holding its refresh token), then saves the result. */
  async #refresh(stored: TokenSet, options: RefreshOptions): Promise<TokenSet> {
    if (stored.refreshToken === undefined) throw new ReauthorizationRequiredError('no_refresh_token');
    // Refused before in this process, and still what the store holds (just read): never sent again.
    const refused = refusedReason(this.#options.oauth, stored.refreshToken);
    if (refused !== undefined) throw new ReauthorizationRequiredError(refused, { userClients: this.#options.saved.forUser });
    const startedAt = Date.now();
    let fresh: TokenSet;
    try {
      // Never sent once seen replaced: the successor is returned instead.
      fresh = await refreshOnce(this.#options.oauth, stored);
    } catch (error) {
      return this.#afterRefused(stored, error, options);
    }
    const { saved } = this.#options;
    return saved.save({ tokens: saved.stamp(fresh), expected: stored.refreshToken, startedAt }, { inLock: options.inLock });
  }

  /**
   * A refresh that failed. `invalid_grant` (Assumptions: refresh token lifetime) is concluded only after a re-read: if
   * someone stored other tokens while the refresh was in flight, the refused refresh token is simply stale: theirs
   * are used, or refreshed (once).
   */
  async #afterRefused(stored: TokenSet, error: unknown, options: RefreshOptions): Promise<TokenSet> {
    const { saved, fresh, oauth } = this.#options;
    if (!(error instanceof ReauthorizationRequiredError)) throw error;
    recordRefused(oauth, stored.refreshToken as string, error.reason);
    const current = await saved.read(stored);
    if (current === undefined) throw error;
    if (current.refreshToken === stored.refreshToken) {
      await saved.markRefused(error, current);
      throw error;
    }
    recordRotation(oauth, stored, current, 'observed');
    if (fresh.isUsable(current, options.rejected)) return saved.use(current);
    if (options.retried) throw error;
    return this.#refresh(current, { ...options, retried: true });
  }

  /**
   * While another process holds the lock, with what the store holds at each look: that process's refreshed tokens
   * once they are stored, else `undefined` (go on waiting).
   */
  #useHolders(seen: TokenSet, stored: TokenSet | undefined, rejected: string | undefined): TokenSet | undefined {
    const { saved, fresh, oauth } = this.#options;
    // Another process may be replacing `seen`: should the store now lose its data, `seen` is no longer written back.
    saved.contest();
    if (stored === undefined || sameTokens(stored, seen)) return undefined;
    recordRotation(oauth, seen, stored, 'observed');
    if (newestKnown(oauth, stored) !== stored || !fresh.isUsable(stored, rejected)) return undefined;
    return saved.use(stored);
  }

  /**
   * `run` inside the store's lock: another process holding it may be refreshing right now. Waiting for the lock is
   * bounded by `lockTimeoutMs`; a lock granted after the manager gave up runs nothing. Once `run` is done, the lock's
   * own settling (its release) is awaited at most `storeTimeoutMs`: `run`'s outcome then stands, so a store whose
   * release hangs cannot hang this manager. A refresh whose save failed keeps the lock until the save lands
   * (`SavedTokens.landing`), and its outcome (the error) is returned at once. `whileWaiting` goes to the store (see
   * `TokenStoreLockOptions`): a store that watches its tokens ends the wait with the holder's result.
   */
  async #withLock(run: () => Promise<TokenSet>, whileWaiting: (stored: TokenSet | undefined) => TokenSet | undefined): Promise<TokenSet> {
    const { store, saved, lockTimeoutMs, storeTimeoutMs, oauth } = this.#options;
    let abandoned = false;
    let outcome: Promise<TokenSet> | undefined;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const locked = store.lock!(
      async () => {
        if (abandoned) throw new TokenStoreError('lock', new Error('the lock was granted after the manager gave up waiting'));
        started();
        const ran = (outcome = run());
        await ran.then(noop, noop);
        // Refreshed tokens not saved yet: no other process may refresh from the store (with the refresh token they
        // replace) until they are in it. The lock is held, and extended, until then.
        await saved.landing;
        return ran;
      },
      {
        whileWaiting: (stored) => (abandoned ? undefined : whileWaiting(stored)),
        // The lease outlives the refresh and its save even in a process that stops running meanwhile (no extension).
        leaseMs: (oauth.timeoutMs ?? DEFAULT_REFRESH_BOUND_MS) + storeTimeoutMs,
        // A holder whose lease lapsed while its save was failing (its store down past the lease) retries the save
        // at least every PENDING_SAVE_RETRY_MS, each try bounded by storeTimeoutMs: its tokens are waited for that long.
        pendingSaveMs: storeTimeoutMs + PENDING_SAVE_RETRY_MS,
      },
    ).catch((error: unknown) => {
      throw error instanceof PostSchedError ? error : new TokenStoreError('lock', error);
    });
    const granted = await timeBound(() => Promise.race([locked, running]), lockTimeoutMs, () => {
      abandoned = true;
      return new TokenStoreError('lock', new Error(`the lock was not granted within ${lockTimeoutMs} ms`));
    });
    // The store ended the wait with the holder's tokens: `run` never ran.
    if (outcome === undefined) return granted as TokenSet;
    // `run` is done: its outcome stands once the lock settles, or `storeTimeoutMs` later (no error: `hung` says which).
    const ran = outcome;
    await ran.then(noop, noop);
    if (saved.landing !== undefined) {
      locked.catch(noop); // settles with `ran`'s outcome once the save lands
      return ran;
    }
    const hung = new Error();
    return timeBound(() => locked, storeTimeoutMs, () => hung).catch((error: unknown) => {
      if (error !== hung) throw error;
      return ran;
    });
  }
}

function noop(): void {}

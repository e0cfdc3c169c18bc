/**
 * The token manager's saved tokens: what the store holds, read and checked; refreshed tokens saved with a
 * compare-and-set and `onTokens`; the saves that did not complete (pending); and the recovery of a store that lost
 * acknowledged writes (the newest tokens this manager holds are written back). Every store call and `onTokens` is
 * bounded by `storeTimeoutMs`.
 */
import { PostSchedError } from '../core/base-error.js';
import { timeBound, within } from '../core/time-bound.js';
import { ReauthorizationRequiredError, TokenStoreError, type TokenStoreOperation } from './errors.js';
import type { FreshToken, HoldOptions } from './fresh-token.js';
import { newestKnown, recordRotation, recordStored } from './shared-refresh.js';
import { copyTokenSet, isOtherUsers, parseTokenSet, sameTokens } from './token-set.js';
import type { TokenRefresher, TokenSet, TokenStore } from './types.js';

/**
 * After a refresh saved inside the store's lock, the store is read again this long after the save (one read). The
 * processes that waited for that refresh read its result within about a second; one that found the store emptied
 * first (Redis flushed or restarted) holds tokens that may be rotated out, and neither writes nor refreshes them.
 * This manager holds the newest and writes them back then, not at its next refresh (a token's lifetime later).
 */
const RECHECK_AFTER_MS = 2_000;

/** Tokens to save: obtained by a refresh, or written back to a store that lost them. */
export interface Pending {
  readonly tokens: TokenSet;
  /** The refresh token they replace (the compare-and-set value). */
  readonly expected: string | undefined;
  /** When the refresh that obtained them started; `undefined` for tokens written back, not obtained. */
  readonly startedAt: number | undefined;
}

export interface SavedTokensOptions {
  readonly oauth: TokenRefresher;
  readonly store: TokenStore;
  readonly onTokens: ((tokens: TokenSet) => void | Promise<void>) | undefined;
  readonly storeTimeoutMs: number;
  readonly userId: string | undefined;
  /** The fresh-token cache that the tokens read or saved go to. */
  readonly fresh: FreshToken;
  /** Reads the store again as a call would (a flight), `RECHECK_AFTER_MS` after a save inside the lock. */
  readonly recheck: () => void;
}

export class SavedTokens {
  readonly #options: SavedTokensOptions;
  /** Refreshed tokens whose saving failed or timed out; settled before anything else is written or handed out. */
  #pending: Pending | undefined;
  /** The newest tokens this manager has read from the store or written to it: written back if the store loses them. */
  #seen: TokenSet | undefined;
  /** Set while another process held the lock since `#seen` was read: it may have replaced them. */
  #contested = false;
  /** Refreshed tokens still being saved inside the store's lock after the call that refreshed gave up (see `landing`). */
  #landing: Promise<void> | undefined;

  constructor(options: SavedTokensOptions) {
    this.#options = options;
  }

  /** Tokens whose `store.set` or `onTokens` failed: they exist nowhere else. */
  get pending(): Pending | undefined {
    return this.#pending;
  }

  /** `store.get()`, bounded and checked (see `check`). */
  async read(involved?: TokenSet): Promise<TokenSet | undefined> {
    return this.check(await this.#call('get', () => this.#options.store.get(), involved));
  }

  /**
   * What the store holds (read, or shown while waiting for its lock), checked: anything but a TokenSet or `undefined`,
   * or a TokenSet stamped with another user's id, is a `TokenStoreError`; such tokens are never used or written.
   */
  check(stored: unknown): TokenSet | undefined {
    try {
      if (stored === undefined) return undefined;
      if (stored === null) throw new TypeError('get() returned null; return undefined when no tokens are stored');
      const tokens = parseTokenSet(stored, 'get()');
      if (this.isOthers(tokens)) throw new TypeError("get() returned another user's tokens (another `userId`): a user's store must read only that user's key");
      return tokens;
    } catch (error) {
      throw new TokenStoreError('get', error);
    }
  }

  /**
   * What the store holds, as the newest tokens this process knows. When the store lost acknowledged writes (it holds
   * nothing, or tokens this process has seen replaced), the newest tokens the manager holds are written back instead
   * of failing, and a replaced refresh token is never used. `refused`: writes of this kind the store refused already.
   */
  async current({ refused = 0 }: { refused?: number } = {}): Promise<TokenSet> {
    for (; ; refused++) {
      const stored = await this.read();
      const newest = newestKnown(this.#options.oauth, this.#held(stored));
      if (newest === stored) {
        this.#see(stored);
        return stored;
      }
      // Writes refused again and again while the store stays behind: it does not honour expectedRefreshToken (or lies).
      if (refused > 2) throw new TokenStoreError('set', new Error('set() keeps refusing the write (false) while get() holds older tokens or none'));
      const pending: Pending = { tokens: this.stamp(newest), expected: stored?.refreshToken ?? newest.refreshToken, startedAt: undefined };
      if (await this.#write(pending)) {
        await this.#notify(pending);
        return this.use(pending.tokens);
      }
    }
  }

  /**
   * Saves `pending` (store.set as a compare-and-set, then onTokens, both awaited), then hands its tokens out; a refused
   * write means the store moved on: its tokens are used. `inLock`: a save whose outcome is unknown is tried again for up
   * to `storeTimeoutMs`, then fails, and goes on being tried while the lock is held (`landing`): no other process
   * refreshes from the store while the newest tokens are unsaved. The store is read again `RECHECK_AFTER_MS` later.
   */
  async save(pending: Pending, { inLock = false }: { inLock?: boolean } = {}): Promise<TokenSet> {
    if (!(await this.#write(pending, { inLock }))) return this.use(await this.current({ refused: 1 }));
    if (inLock && pending.startedAt !== undefined) this.#recheckLater(pending.tokens);
    await this.#notify(pending);
    return this.use(pending.tokens, { obtainedAt: pending.startedAt });
  }

  /**
   * Finishes saving tokens whose `set` or `onTokens` failed, deciding from what the store holds now, never from
   * what the manager remembers: the write landed (only onTokens is left), it did not (the store still holds the
   * refresh token they replace, or nothing: write again), or the store has moved on (drop them).
   */
  async settlePending(): Promise<void> {
    const pending = this.#pending;
    if (pending === undefined) return;
    const current = await this.read(pending.tokens);
    this.#pending = undefined;
    if (current !== undefined && sameTokens(current, pending.tokens)) {
      this.#see(pending.tokens);
      await this.#notify(pending);
      this.use(pending.tokens, { obtainedAt: pending.startedAt });
    } else if (current === undefined || current.refreshToken === pending.expected) {
      await this.save(pending);
    }
  }

  /** Stores tokens given by the app (a new sign-in): no compare-and-set, whatever is stored is replaced. */
  async replace(tokens: TokenSet): Promise<void> {
    await this.#call('set', () => this.#options.store.set(tokens), tokens);
    this.#pending = undefined;
    this.use(tokens);
  }

  /** What the store holds, or the tokens whose save did not complete when they are still the newest. */
  async snapshot(): Promise<TokenSet | undefined> {
    const pending = this.#pending;
    const stored = await this.read(pending?.tokens);
    // Unless the store has moved past them since (another process rotated): then the store's are the newest, and
    // handing out the pending ones could write them back over newer.
    if (pending === undefined || (stored !== undefined && !sameTokens(stored, pending.tokens) && stored.refreshToken !== pending.expected)) {
      return stored;
    }
    return copyTokenSet(pending.tokens); // the caller may change what it gets: not the tokens still to be saved
  }

  /** Tells a store that records it (`TokenStore.markReauthorizationRequired`) that these tokens were refused; best effort. */
  async markRefused(error: ReauthorizationRequiredError, refused: TokenSet): Promise<void> {
    const { store } = this.#options;
    if (typeof store.markReauthorizationRequired !== 'function') return;
    await this.#call('set', () => store.markReauthorizationRequired!(error.reason, refused), refused).catch(noop);
  }

  /**
   * Inside the store's lock, once a refresh's save failed past `storeTimeoutMs`: settles when its tokens are in the store
   * (or the store moved past them). The lock is held, and its lease extended, until then: another process would
   * otherwise read the refresh token they replace and refresh with it, which the service refuses (the user must sign
   * in again). Each try is bounded by `storeTimeoutMs`, a second apart at most; a process that dies stops extending the
   * lease, which then expires. The next call of this manager finishes the save (`settlePending`: onTokens).
   */
  get landing(): Promise<void> | undefined {
    return this.#landing;
  }

  /** Makes `tokens`, which the store holds, the ones handed out (see `FreshToken.hold`). */
  use(tokens: TokenSet, options?: HoldOptions): TokenSet {
    this.#see(tokens);
    return this.#options.fresh.hold(tokens, options);
  }

  /** Another process holds the lock and may be replacing the tokens seen: should the store lose them, not written back. */
  contest(): void {
    this.#contested = true;
  }

  /** Whether the tokens are a `UserClients` user's (errors then name `users.connect()`). */
  get forUser(): boolean {
    return this.#options.userId !== undefined;
  }

  /** Whether `tokens` are stamped with a user other than this manager's (see `isOtherUsers`). */
  isOthers(tokens: TokenSet): boolean {
    return isOtherUsers(tokens, this.#options.userId);
  }

  /** A copy of `tokens` to write, stamped with this manager's user, if it has one. */
  stamp(tokens: TokenSet): TokenSet {
    return copyTokenSet(tokens, this.#options.userId);
  }

  /** What the store holds, or when it lost them (and no other process may hold newer) what this manager saw last. */
  #held(stored: TokenSet | undefined): TokenSet {
    const seen = this.#seen;
    // The store moved on from what this manager saw last: remembered, should the store later go back to it.
    if (seen !== undefined && stored !== undefined && !sameTokens(seen, stored)) recordRotation(this.#options.oauth, seen, stored, 'observed');
    const held = stored ?? (this.#contested ? undefined : seen);
    if (held !== undefined) return held;
    if (seen === undefined) throw new ReauthorizationRequiredError('no_tokens', { userClients: this.#options.userId !== undefined });
    // The store emptied while another process was refreshing the tokens this manager holds: that process holds
    // the newer ones and writes them back; these may be rotated out, so they are neither written nor refreshed.
    throw new TokenStoreError('get', new Error('the store lost the tokens while another process was refreshing them; that process writes its tokens back: try again'));
  }

  /**
   * `store.set` as a compare-and-set; `false` when the store refused it. A failure leaves the tokens pending; `inLock`,
   * tries again for up to `storeTimeoutMs`, then fails, and goes on trying while the lock is held (`landing`).
   */
  async #write(pending: Pending, { inLock = false, untilLanded = false }: { inLock?: boolean; untilLanded?: boolean } = {}): Promise<boolean> {
    const { tokens, expected } = pending;
    const deadline = untilLanded ? Infinity : Date.now() + this.#options.storeTimeoutMs;
    let written: void | boolean;
    for (let attempt = 0; ; attempt++) {
      try {
        // The tries past the call's bound run in the background: their timers never keep the process alive.
        written = await this.#call('set', () => this.#options.store.set(tokens, { expectedRefreshToken: expected }), tokens, untilLanded);
        break;
      } catch (error) {
        const wait = Math.min(1_000, 25 * 2 ** attempt);
        if (!inLock || Date.now() + wait >= deadline) {
          this.#pending = pending; // the write may still land: settled by re-reading before anything else is written
          if (inLock) {
            const landing = this.#write(pending, { inLock, untilLanded: true }).then(noop, noop).finally(() => {
              if (this.#landing === landing) this.#landing = undefined;
            });
            this.#landing = landing;
          }
          throw error;
        }
        await within(undefined, wait, undefined, noop, untilLanded);
      }
    }
    if (written === false) return false;
    this.#see(tokens);
    return true;
  }

  /** onTokens for tokens the store holds; a failure leaves them pending (the call is made again first thing). */
  async #notify(pending: Pending): Promise<void> {
    const { onTokens } = this.#options;
    if (onTokens === undefined) return;
    try {
      await this.#call('onTokens', async () => onTokens(pending.tokens), pending.tokens);
    } catch (error) {
      this.#pending = pending;
      throw error;
    }
  }

  /**
   * `RECHECK_AFTER_MS` after saving `tokens` inside the lock, a flight as a call makes (which writes them back if the store
   * lost them), while they are still the newest this manager holds; on a timer that does not keep the process alive.
   */
  #recheckLater(tokens: TokenSet): void {
    const timer = setTimeout(() => {
      if (this.#seen !== undefined && sameTokens(this.#seen, tokens)) this.#options.recheck();
    }, RECHECK_AFTER_MS);
    (timer as { unref?: () => void }).unref?.();
  }

  /** Remembers the newest tokens read or written (written back should the store lose them); a store holds them now. */
  #see(tokens: TokenSet): void {
    this.#seen = tokens;
    this.#contested = false;
    recordStored(this.#options.oauth, tokens);
  }

  /** Calls the store or `onTokens`, bounded by `storeTimeoutMs`; foreign errors are wrapped, never attached (they may hold the tokens). */
  async #call<T>(operation: TokenStoreOperation, fn: () => Promise<T>, involved?: TokenSet, unref = false): Promise<T> {
    const ms = this.#options.storeTimeoutMs;
    try {
      return await timeBound(fn, ms, () => new Error(`no answer within ${ms} ms (storeTimeoutMs); the next call tries again`), unref);
    } catch (error) {
      // The SDK's own errors (RedisTokenStore's TokenStoreUnavailableError, …) are typed and secret-free: keep them.
      if (error instanceof PostSchedError) throw error;
      const known = [involved, this.#options.fresh.tokens, this.#pending?.tokens].flatMap((t) => (t === undefined ? [] : [t.accessToken, t.refreshToken ?? '']));
      throw new TokenStoreError(operation, error, known);
    }
  }
}

function noop(): void {}


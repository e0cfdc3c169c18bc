/**
 * A token manager's refresh, as one sequence in time order (see `TokenManager`): the tokens still to be saved are
 * settled, the store is read, and when what it holds will not do, its lock is taken, the store read again, the tokens
 * refreshed (once per refresh token across the managers of the process: `refreshOnce`), saved (a compare-and-set, then
 * `onTokens`), and the lock released. It calls down only: the store adapter (I/O, no state), the fresh-token cache,
 * the process's memory of rotations.
 */
import { ConnectionError, TimeoutError } from '../core/errors.js';
import { requestNeverLeft } from '../core/scrub.js';
import { timeBound, within } from '../core/time-bound.js';
import { type ReauthorizationReason, ReauthorizationRequiredError, TokenStoreError } from './errors.js';
import type { FreshToken, HoldOptions } from './fresh-token.js';
import { newestKnown, recordRefused, recordRotation, recordStored, refreshOnce, refusedReason } from './shared-refresh.js';
import type { Known, TokenStoreAdapter } from './token-store-adapter.js';
import { copyTokenSet, sameTokens } from './token-set.js';
import type { StoredGrant, TokenRefresher, TokenSet } from './types.js';

/** The longest pause between two tries of a save inside the lock: a live holder's next try comes sooner. */
const SAVE_RETRY_MAX_MS = 1_000;
/**
 * After a refresh saved inside the store's lock, the store is read again this long after the save (one read). The
 * processes that waited for that refresh read its result within about a second; one that found the store emptied
 * first (Redis flushed or restarted) holds tokens that may be rotated out, and neither writes nor refreshes them.
 * This manager holds the newest and writes them back then, not at its next refresh (a token's lifetime later).
 */
const RECHECK_AFTER_MS = 2_000;

export interface TokenRefreshOptions {
  readonly oauth: TokenRefresher;
  readonly store: TokenStoreAdapter;
  readonly fresh: FreshToken;
  readonly lockTimeoutMs: number;
  readonly storeTimeoutMs: number;
  /** Called when this manager's mark of a dead grant was the one the store took (`markRefused`: `true`). */
  readonly onMarked?: ((error: ReauthorizationRequiredError) => void) | undefined;
}

/** Tokens to save: obtained by a refresh, or written back to a store that lost them. */
interface Pending {
  readonly tokens: TokenSet;
  /** The refresh token they replace (the compare-and-set value). */
  readonly expected: string | undefined;
  /** When the refresh that obtained them started; `undefined` for tokens written back, not obtained. */
  readonly startedAt: number | undefined;
}

/** One flight in progress; `rejected` is the access token the service refused (`forceRefresh`), if any. */
interface Flight {
  readonly promise: Promise<TokenSet>;
  readonly rejected: string | undefined;
}

export class TokenRefresh {
  readonly #options: TokenRefreshOptions;
  /** The newest flight; later flights chain after it, so one manager never runs two refreshes at once. */
  #flight: Flight | undefined;
  /** Refreshed tokens whose saving failed or timed out; settled before anything else is written or handed out. */
  #pending: Pending | undefined;
  /** The newest tokens this manager has read from the store or written to it: written back if the store loses them. */
  #seen: TokenSet | undefined;
  /** Set while another process held the lock since `#seen` was read: it may have replaced them. */
  #contested = false;
  /** Refreshed tokens still being saved inside the store's lock after the call that refreshed gave up. */
  #landing: Promise<void> | undefined;

  constructor(options: TokenRefreshOptions) {
    this.#options = options;
  }

  /** Whether refreshed tokens wait to be saved (their `store.set` or `onTokens` failed): they exist nowhere else. */
  get unsaved(): boolean {
    return this.#pending !== undefined;
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
   * The sequence: tokens still to be saved first; one read of the store; then, only when what it holds will not do,
   * the lock (when the store has one: a still-valid token costs one read and never the lock), a second read inside
   * it, the refresh, the save, and the lock's release.
   */
  async #obtain(rejected: string | undefined): Promise<TokenSet> {
    const { fresh, store } = this.#options;
    await this.settlePending();
    const stored = await this.#current();
    if (fresh.isUsable(stored, rejected)) return this.#use(stored);
    if (!store.locks) return this.#refresh(stored, { rejected, inLock: false });
    return this.#withLock(
      async (resent) => {
        // Read again: another process may have refreshed while this one waited for the lock.
        const current = await this.#current();
        if (fresh.isUsable(current, rejected)) return this.#use(current);
        return this.#refresh(current, { rejected, inLock: true, resent });
      },
      (current) => this.#useHolders(stored, store.check(current), rejected),
    );
  }

  /**
   * What the store holds, as the newest tokens this process knows. When the store lost acknowledged writes (it holds
   * nothing, or tokens this process has seen replaced), the newest tokens the manager holds are written back instead
   * of failing, and a replaced refresh token is never used. `refused`: writes of this kind the store refused already.
   */
  async #current(refused = 0): Promise<TokenSet> {
    for (; ; refused++) {
      const stored = await this.#readLive();
      const newest = newestKnown(this.#options.oauth, this.#held(stored));
      if (newest === stored) {
        this.#see(stored);
        return stored;
      }
      // Writes refused again and again while the store stays behind: it does not honour expectedRefreshToken (or lies).
      if (refused > 2) throw new TokenStoreError('set', new Error('set() keeps refusing the write (false) while get() holds older tokens or none'));
      const pending: Pending = { tokens: this.#options.store.stamp(newest), expected: stored?.refreshToken ?? newest.refreshToken, startedAt: undefined };
      if (await this.#write(pending)) {
        await this.#notify(pending);
        return this.#use(pending.tokens);
      }
    }
  }

  /** What the store holds, or when it lost them (and no other process may hold newer) what this manager saw last. */
  #held(stored: TokenSet | undefined): TokenSet {
    const seen = this.#seen;
    // The store moved on from what this manager saw last: remembered, should the store later go back to it.
    if (seen !== undefined && stored !== undefined && !sameTokens(seen, stored)) recordRotation(this.#options.oauth, seen, stored, 'observed');
    const held = stored ?? (this.#contested ? undefined : seen);
    if (held !== undefined) return held;
    if (seen === undefined) throw new ReauthorizationRequiredError('no_tokens', { userClients: this.#options.store.forUser });
    // The store emptied while another process was refreshing the tokens this manager holds: that process holds
    // the newer ones and writes them back; these may be rotated out, so they are neither written nor refreshed.
    throw new TokenStoreError('get', new Error('the store lost the tokens while another process was refreshing them; that process writes its tokens back: try again'));
  }

  /**
   * `run` inside the store's lock: another process holding it may be refreshing right now. Waiting for the lock is
   * bounded by `lockTimeoutMs`; a lock granted after the manager gave up runs nothing. Once `run` is done, the lock's
   * own settling (its release) is awaited at most `storeTimeoutMs`: `run`'s outcome then stands, so a store whose
   * release hangs cannot hang this manager. A refresh whose save failed keeps the lock until the save lands
   * (`#landing`), and its outcome (the error) is returned at once. `whileWaiting` goes to the store (see
   * `TokenStoreLockOptions`): a store that watches its tokens ends the wait with the holder's result. `run` is told
   * whether the lock was taken over from a holder that never released it (`onTakeover`): its refresh's outcome is unknown.
   */
  async #withLock(run: (resent: boolean) => Promise<TokenSet>, whileWaiting: (stored: TokenSet | undefined) => TokenSet | undefined): Promise<TokenSet> {
    const { store, lockTimeoutMs, storeTimeoutMs } = this.#options;
    let abandoned = false;
    let outcome: Promise<TokenSet> | undefined;
    let started!: () => void;
    let takenOver = false;
    const running = new Promise<void>((resolve) => (started = resolve));
    const locked = store.lock(
      async () => {
        if (abandoned) throw new TokenStoreError('lock', new Error('the lock was granted after the manager gave up waiting'));
        started();
        const ran = (outcome = run(takenOver));
        await ran.then(noop, noop);
        // Refreshed tokens not saved yet: no other process may refresh from the store (with the refresh token they
        // replace) until they are in it. The lock is held, and extended, until then.
        await this.#landing;
        return ran;
      },
      {
        whileWaiting: (stored) => (abandoned ? undefined : whileWaiting(stored)),
        // A holder whose lease lapsed while its save was failing (its store down past the lease) retries the save
        // at least every SAVE_RETRY_MAX_MS, each try bounded by storeTimeoutMs: its tokens are waited for that long.
        pendingSaveMs: storeTimeoutMs + SAVE_RETRY_MAX_MS,
        onTakeover: () => (takenOver = true),
      },
    );
    const granted = await timeBound(() => Promise.race([locked, running]), lockTimeoutMs, () => {
      abandoned = true;
      return new TokenStoreError('lock', new Error(`the lock was not granted within ${lockTimeoutMs} ms`));
    });
    // The store ended the wait with the holder's tokens: `run` never ran.
    if (outcome === undefined) return granted as TokenSet;
    // `run` is done: its outcome stands once the lock settles, or `storeTimeoutMs` later (no error: `hung` says which).
    const ran = outcome;
    await ran.then(noop, noop);
    if (this.#landing !== undefined) {
      locked.catch(noop); // settles with `ran`'s outcome once the save lands
      return ran;
    }
    const hung = new Error();
    return timeBound(() => locked, storeTimeoutMs, () => hung).catch((error: unknown) => {
      if (error !== hung) throw error;
      return ran;
    });
  }

  /**
   * While another process holds the lock, with what the store holds at each look: that process's refreshed tokens
   * once they are stored, else `undefined` (go on waiting).
   */
  #useHolders(seen: TokenSet, stored: TokenSet | undefined, rejected: string | undefined): TokenSet | undefined {
    const { fresh, oauth } = this.#options;
    // Another process may be replacing `seen`: should the store now lose its data, `seen` is no longer written back.
    this.#contested = true;
    if (stored === undefined || sameTokens(stored, seen)) return undefined;
    recordRotation(oauth, seen, stored, 'observed');
    if (newestKnown(oauth, stored) !== stored || !fresh.isUsable(stored, rejected)) return undefined;
    return this.#use(stored);
  }

  /**
   * Refreshes `stored` (shared with every manager of the process holding its refresh token), then saves the result.
   * `retried`: a second refresh, of tokens found in the store after the first was refused, never a third. `resent`:
   * the refresh token may have been sent already by a holder of the lock that never released it (see `#send`).
   */
  async #refresh(stored: TokenSet, options: { rejected: string | undefined; inLock: boolean; retried?: boolean; resent?: boolean }): Promise<TokenSet> {
    const { oauth, store, fresh } = this.#options;
    if (stored.refreshToken === undefined) return this.#endGrant(stored, new ReauthorizationRequiredError('no_refresh_token'), options.rejected);
    // Refused before in this process, and still what the store holds (just read): never sent again.
    const refusedFor = refusedReason(oauth, stored.refreshToken);
    if (refusedFor !== undefined) return this.#endGrant(stored, new ReauthorizationRequiredError(refusedFor, { userClients: store.forUser }), options.rejected);
    const startedAt = Date.now();
    let obtained: TokenSet;
    try {
      obtained = await this.#send(stored, options.resent === true && options.retried !== true);
    } catch (error) {
      if (!(error instanceof ReauthorizationRequiredError)) throw error;
      // `invalid_grant` (Assumptions: refresh token lifetime) is concluded only after a re-read: if someone stored
      // other tokens while the refresh was in flight, the refused refresh token is simply stale: theirs are used, or
      // refreshed (once).
      recordRefused(oauth, stored.refreshToken, error.reason);
      const current = await this.#read(stored);
      if (current === undefined) throw error;
      if (current.refreshToken === stored.refreshToken) return this.#endGrant(current, error, options.rejected);
      recordRotation(oauth, stored, current, 'observed');
      if (fresh.isUsable(current, options.rejected)) return this.#use(current);
      if (options.retried) throw error;
      return this.#refresh(current, { ...options, retried: true });
    }
    return this.#save({ tokens: store.stamp(obtained), expected: stored.refreshToken, startedAt }, options.inLock);
  }

  /**
   * The service refused the refresh token of `tokens`, which the store still holds. While their access token is valid
   * (not `rejected`, not expired), calls go on with it until it expires. Then the grant ends: the store is marked (only
   * the process whose compare-and-set took the mark reports it, `onMarked`) and `error` thrown.
   */
  async #endGrant(tokens: TokenSet, error: ReauthorizationRequiredError, rejected: string | undefined): Promise<TokenSet> {
    if (tokens.accessToken !== rejected && Date.now() < tokens.expiresAt) return this.#use(tokens, { toExpiry: true });
    if ((await this.#options.store.markRefused(error.reason, tokens)) === true) this.#options.onMarked?.(error);
    this.#options.fresh.drop();
    throw error;
  }

  /**
   * Refreshes `stored` (never sent once seen replaced: the successor is returned instead). A refresh whose outcome is
   * unknown (it left, and no answer came: reset, time-out) is sent again at once, once, with the same refresh token:
   * the service may have rotated it with the answer lost, and a window (overlap, retain-until-used, static tokens) still
   * accepts it. Refused then, the newest token never arrived: `refresh_outcome_unknown`, never sent again. `resent`:
   * a holder of the lock that died or stalled may have sent it (`onTakeover`): this refresh is that resend.
   */
  async #send(stored: TokenSet, resent: boolean): Promise<TokenSet> {
    const { oauth, store } = this.#options;
    if (!resent) {
      try {
        return await refreshOnce(oauth, stored);
      } catch (error) {
        if (!(error instanceof TimeoutError || (error instanceof ConnectionError && !requestNeverLeft(error)))) throw error;
      }
    }
    try {
      return await refreshOnce(oauth, stored);
    } catch (error) {
      if (!(error instanceof ReauthorizationRequiredError && error.reason === 'invalid_grant')) throw error;
      const { error_description, error_uri, status } = error;
      throw new ReauthorizationRequiredError('refresh_outcome_unknown', { error_description, error_uri, status, userClients: store.forUser });
    }
  }

  /**
   * Saves `pending` (store.set as a compare-and-set, then onTokens, both awaited), then hands its tokens out; a refused
   * write means the store moved on: its tokens are used. `inLock`: a save whose outcome is unknown is tried again for up
   * to `storeTimeoutMs`, then fails, and goes on being tried while the lock is held (`#landing`): no other process
   * refreshes from the store while the newest tokens are unsaved. The store is read again `RECHECK_AFTER_MS` later.
   */
  async #save(pending: Pending, inLock = false): Promise<TokenSet> {
    if (!(await this.#write(pending, { inLock }))) return this.#use(await this.#current(1));
    if (inLock && pending.startedAt !== undefined) this.#recheckLater(pending.tokens);
    await this.#notify(pending);
    return this.#use(pending.tokens, { obtainedAt: pending.startedAt });
  }

  /**
   * `store.set` as a compare-and-set; `false` when the store refused it. A failure leaves the tokens pending; `inLock`,
   * tries again for up to `storeTimeoutMs`, then fails, and goes on trying in the background while the lock is held
   * (`untilLanded`, each try bounded by `storeTimeoutMs`, a second apart at most, on timers that do not keep the process
   * alive; a process that dies stops extending the lease, which then expires). The next call finishes the save
   * (`settlePending`: onTokens).
   */
  async #write(pending: Pending, { inLock = false, untilLanded = false }: { inLock?: boolean; untilLanded?: boolean } = {}): Promise<boolean> {
    const { tokens, expected } = pending;
    const deadline = untilLanded ? Infinity : Date.now() + this.#options.storeTimeoutMs;
    let written: boolean;
    for (let attempt = 0; ; attempt++) {
      try {
        written = await this.#options.store.write(tokens, expected, this.#known(tokens), untilLanded);
        break;
      } catch (error) {
        const wait = Math.min(SAVE_RETRY_MAX_MS, 25 * 2 ** attempt);
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
    if (!written) return false;
    this.#see(tokens);
    return true;
  }

  /** onTokens for tokens the store holds; a failure leaves them pending (the call is made again first thing). */
  async #notify(pending: Pending): Promise<void> {
    try {
      await this.#options.store.notify(pending.tokens, this.#known(pending.tokens));
    } catch (error) {
      this.#pending = pending;
      throw error;
    }
  }

  /**
   * `RECHECK_AFTER_MS` after saving `tokens` inside the lock, a flight as a call makes (which writes them back if the
   * store lost them), while they are still the newest this manager holds; on a timer that does not keep the process
   * alive. Its failure is left to the next call.
   */
  #recheckLater(tokens: TokenSet): void {
    const timer = setTimeout(() => {
      if (this.#seen !== undefined && sameTokens(this.#seen, tokens)) void this.join().catch(noop);
    }, RECHECK_AFTER_MS);
    (timer as { unref?: () => void }).unref?.();
  }

  /**
   * Finishes saving tokens whose `set` or `onTokens` failed, deciding from what the store holds now, never from
   * what the manager remembers: the write landed (only onTokens is left), it did not (the store still holds the
   * refresh token they replace, or nothing: write again), or the store has moved on (drop them).
   */
  async settlePending(): Promise<void> {
    const pending = this.#pending;
    if (pending === undefined) return;
    const current = await this.#read(pending.tokens);
    this.#pending = undefined;
    if (current !== undefined && sameTokens(current, pending.tokens)) {
      this.#see(pending.tokens);
      await this.#notify(pending);
      this.#use(pending.tokens, { obtainedAt: pending.startedAt });
    } else if (current === undefined || current.refreshToken === pending.expected) {
      await this.#save(pending);
    }
  }

  /** Stores tokens given by the app (a new sign-in): no compare-and-set, whatever is stored is replaced. */
  async replace(tokens: TokenSet): Promise<void> {
    await this.#options.store.replace(tokens);
    this.#pending = undefined;
    this.#use(tokens);
  }

  /** What the store holds, or the tokens whose save did not complete when they are still the newest. */
  async snapshot(): Promise<TokenSet | undefined> {
    const pending = this.#pending;
    const stored = await this.#read(pending?.tokens);
    // Unless the store has moved past them since (another process rotated): then the store's are the newest, and
    // handing out the pending ones could write them back over newer.
    if (pending === undefined || (stored !== undefined && !sameTokens(stored, pending.tokens) && stored.refreshToken !== pending.expected)) {
      return stored;
    }
    return copyTokenSet(pending.tokens); // the caller may change what it gets: not the tokens still to be saved
  }

  /**
   * What the store holds, with its mark: a grant marked dead (or tokens removed) fails here, before any request, and
   * nothing this manager holds is handed out or written back any more.
   */
  async #readLive(): Promise<TokenSet | undefined> {
    const { tokens, reconnect } = await this.#options.store.readGrant(this.#known(undefined));
    if (reconnect === undefined) return tokens;
    this.#forget();
    throw new ReauthorizationRequiredError(reconnect.reason, { userClients: this.#options.store.forUser });
  }

  /**
   * The store's grant: its tokens and mark, and (`refused`) why this process saw the service refuse the refresh token
   * it holds, if it did: all a store without marks can tell.
   */
  async grant(): Promise<StoredGrant & { refused?: ReauthorizationReason | undefined }> {
    const grant = await this.#options.store.readGrant(this.#known(undefined));
    return { ...grant, refused: refusedReason(this.#options.oauth, grant.tokens?.refreshToken) };
  }

  /** Removes the tokens from the store (`TokenStore.delete`) and from this manager: none is written back. */
  async remove(): Promise<void> {
    await this.settled();
    await this.#options.store.remove();
    this.#forget();
  }

  /** Drops every token this manager holds: the store marked the grant dead, or removed the tokens. */
  #forget(): void {
    this.#seen = undefined;
    this.#pending = undefined;
    this.#options.fresh.drop();
  }

  /** `store.get()`, bounded and checked; `involved`: tokens its error must not quote, besides those held. */
  #read(involved?: TokenSet): Promise<TokenSet | undefined> {
    return this.#options.store.read(this.#known(involved));
  }

  /** The tokens no store error may quote: those involved, the ones handed out, the ones still to be saved. */
  #known(involved: TokenSet | undefined): Known {
    return [involved, this.#options.fresh.tokens, this.#pending?.tokens];
  }

  /** Makes `tokens`, which the store holds, the ones handed out (see `FreshToken.hold`). */
  #use(tokens: TokenSet, options?: HoldOptions): TokenSet {
    this.#see(tokens);
    return this.#options.fresh.hold(tokens, options);
  }

  /** Remembers the newest tokens read or written (written back should the store lose them); a store holds them now. */
  #see(tokens: TokenSet): void {
    this.#seen = tokens;
    this.#contested = false;
    recordStored(this.#options.oauth, tokens);
  }
}

function noop(): void {}

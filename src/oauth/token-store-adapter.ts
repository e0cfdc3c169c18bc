/**
 * The token manager's store adapter, without state: each call to the app's `TokenStore` and `onTokens`, bounded by
 * `storeTimeoutMs`, its foreign errors wrapped as `TokenStoreError` (never attached: they may hold tokens), and what
 * `get()` returns checked. What to read and write, and when, is the refresh's (token-refresh.ts).
 */
import { PostSchedError } from '../core/base-error.js';
import { timeBound } from '../core/time-bound.js';
import { type ReauthorizationReason, TokenStoreError, type TokenStoreOperation } from './errors.js';
import { copyTokenSet, isOtherUsers, parseTokenSet } from './token-set.js';
import type { ReconnectMark, StoredGrant, TokenSet, TokenStore, TokenStoreLockOptions } from './types.js';

export interface TokenStoreAdapterOptions {
  readonly store: TokenStore;
  readonly onTokens: ((tokens: TokenSet) => void | Promise<void>) | undefined;
  readonly storeTimeoutMs: number;
  readonly userId: string | undefined;
}

/** Tokens whose values an error must never quote (those the call involved, those the manager holds). */
export type Known = ReadonlyArray<TokenSet | undefined>;

export class TokenStoreAdapter {
  readonly #options: TokenStoreAdapterOptions;

  constructor(options: TokenStoreAdapterOptions) {
    this.#options = options;
  }

  /** Whether the store has a lock (shared by several processes). */
  get locks(): boolean {
    return this.#options.store.lock !== undefined;
  }

  /** Whether the tokens are a `UserClients` user's (errors then name `users.connect()`). */
  get forUser(): boolean {
    return this.#options.userId !== undefined;
  }

  /**
   * Whether the store marks dead grants (`getGrant` and `markReauthorizationRequired`): each is then reported once
   * across the processes sharing it, by the one that set the mark.
   */
  get marks(): boolean {
    const { store } = this.#options;
    return typeof store.getGrant === 'function' && typeof store.markReauthorizationRequired === 'function';
  }

  /** `store.get()`, bounded and checked (see `check`). */
  async read(known: Known): Promise<TokenSet | undefined> {
    return this.check(await this.#call('get', () => this.#options.store.get(), known));
  }

  /** The tokens and the store's mark in one read (`getGrant`; a store without it: `get()`, and no mark), checked. */
  async readGrant(known: Known): Promise<StoredGrant> {
    const { store } = this.#options;
    if (!this.marks) return { tokens: await this.read(known) };
    const grant = await this.#call('get', () => store.getGrant!(), known);
    if (typeof grant !== 'object' || grant === null) throw new TokenStoreError('get', new TypeError('getGrant() must return { tokens, reconnect? }'));
    const { reconnect, refreshedAt } = grant;
    return { tokens: this.check(grant.tokens), reconnect: isMark(reconnect) ? reconnect : undefined, refreshedAt: typeof refreshedAt === 'number' ? refreshedAt : undefined };
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
   * `store.set` as a compare-and-set on `expected`; `false` when the store refused it. `unref`: a try in the
   * background, whose timer never keeps the process alive.
   */
  async write(tokens: TokenSet, expected: string | undefined, known: Known, unref = false): Promise<boolean> {
    return (await this.#call('set', () => this.#options.store.set(tokens, { expectedRefreshToken: expected }), known, unref)) !== false;
  }

  /** `store.set` without a compare-and-set: a new sign-in replaces whatever is stored. */
  async replace(tokens: TokenSet): Promise<void> {
    await this.#call('set', () => this.#options.store.set(tokens), [tokens]);
  }

  /** `onTokens`, when the app gave one. */
  async notify(tokens: TokenSet, known: Known): Promise<void> {
    const { onTokens } = this.#options;
    if (onTokens !== undefined) await this.#call('onTokens', async () => onTokens(tokens), known);
  }

  /**
   * Tells a store that records it (`TokenStore.markReauthorizationRequired`) that these tokens were refused; best
   * effort. `true`: this call set the mark; `false`: it was set already, or the store moved on; `undefined`: the store
   * has no marks, or failed.
   */
  async markRefused(reason: ReauthorizationReason, refused: TokenSet): Promise<boolean | undefined> {
    const { store } = this.#options;
    if (typeof store.markReauthorizationRequired !== 'function') return undefined;
    const marked = await this.#call('set', () => store.markReauthorizationRequired!(reason, refused), [refused]).catch(noop);
    return typeof marked === 'boolean' && this.marks ? marked : undefined;
  }

  /** `store.delete()` (bounded): the tokens removed for good. */
  async remove(): Promise<void> {
    const { store } = this.#options;
    await this.#call('set', () => store.delete!(), []);
  }

  /** `store.lock`, its foreign errors wrapped (not bounded here: the refresh bounds the wait and the settling). */
  lock<T>(fn: () => Promise<T>, options: TokenStoreLockOptions<T>): Promise<T> {
    return this.#options.store.lock!(fn, options).catch((error: unknown) => {
      throw error instanceof PostSchedError ? error : new TokenStoreError('lock', error);
    });
  }

  /** Whether `tokens` are stamped with a user other than this manager's (see `isOtherUsers`). */
  isOthers(tokens: TokenSet): boolean {
    return isOtherUsers(tokens, this.#options.userId);
  }

  /** A copy of `tokens` to write, stamped with this manager's user, if it has one. */
  stamp(tokens: TokenSet): TokenSet {
    return copyTokenSet(tokens, this.#options.userId);
  }

  /** Calls the store or `onTokens`, bounded by `storeTimeoutMs`; foreign errors are wrapped, never attached (they may hold the tokens). */
  async #call<T>(operation: TokenStoreOperation, fn: () => Promise<T>, known: Known, unref = false): Promise<T> {
    const ms = this.#options.storeTimeoutMs;
    try {
      return await timeBound(fn, ms, () => new Error(`no answer within ${ms} ms (storeTimeoutMs); the next call tries again`), unref);
    } catch (error) {
      // The SDK's own errors (the stores' SharedTokenStoreError, …) are typed and secret-free: keep them.
      if (error instanceof PostSchedError) throw error;
      throw new TokenStoreError(operation, error, known.flatMap((t) => (t === undefined ? [] : [t.accessToken, t.refreshToken ?? ''])));
    }
  }
}

function noop(): void {}

const REASONS: ReadonlySet<unknown> = new Set(['invalid_grant', 'no_tokens', 'no_refresh_token', 'refresh_outcome_unknown']);

/** A `ReconnectMark` as a custom store may return it: a known reason and a time. */
function isMark(value: unknown): value is ReconnectMark {
  const mark = value as ReconnectMark | undefined;
  return typeof mark === 'object' && mark !== null && REASONS.has(mark.reason) && Number.isFinite(mark.since);
}

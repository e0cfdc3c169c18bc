/**
 * What the shared stores (`RedisTokenStore`, `PostgresTokenStore`) do alike with the value under a key, over the
 * store's own commands (`StoreCommands`): `get`, `set` and `lock` (the lease lock, lease-lock.ts); encode and decode
 * the value (token-codec.ts: JSON, sealed by the cipher when the store has an encryption key), remember the value
 * last read or written (so a compare-and-set needs no read first), and the compare-and-set itself: decided from the
 * decoded tokens (`acceptsWrite`), made atomic by a write of the store's that lands only while the key still holds
 * exactly the value read.
 */
import { acceptsWrite, copyTokenSet } from '../oauth/token-set.js';
import type { ReauthorizationReason } from '../oauth/errors.js';
import type { ReconnectMark, StoredGrant, TokenSet, TokenStoreLockOptions, TokenStoreSetOptions } from '../oauth/types.js';
import { type StoreFailureSite, UnreadableValue, unreadableTokens } from './errors.js';
import { type Lease, LeaseLock } from './lease-lock.js';
import type { TokenCipher } from './token-cipher.js';
import { decodeTokens, encodeTokens } from './token-codec.js';

/** The value last read or written under a store's key (`null`: none), and its tokens. */
export interface Seen {
  readonly raw: string | null;
  readonly tokens: TokenSet | undefined;
}

/** A store's own writes of the value under its key (its commands or statements), for `StoredTokens.set`. */
export interface StoreWrites {
  /** Reads the value under the key, as the store answers it. */
  read(): Promise<unknown>;
  /**
   * Writes `value` only while the key holds exactly `current` (`null`: nothing, or no tokens); `true` when written.
   * One atomic step of the store (a Lua script, one SQL statement).
   */
  writeIfUnchanged(current: string | null, value: string): Promise<boolean>;
  /** A plain write. */
  write(value: string): Promise<void>;
  /** Writes only while the lock is `owner`'s: `true` when written. */
  writeIfOwner(value: string, owner: string): Promise<boolean>;
  /**
   * Every write of tokens above clears the mark (`ReconnectMark`); `writeIfUnchanged` with `current` `null` is refused
   * while a mark stands over no tokens (removed on purpose: `remove`). These read and set it:
   * The value under the key and the mark, in one step of the store.
   */
  readGrant(): Promise<{ value: unknown; reconnect: ReconnectMark | undefined; refreshedAt?: number | undefined }>;
  /** Sets `mark` only while the key holds exactly `current` and no mark: `true` when set. One atomic step. */
  markIfUnchanged(current: string, mark: ReconnectMark): Promise<boolean>;
  /** Removes the value, leaving `mark` (reason `no_tokens`). One atomic step. */
  remove(mark: ReconnectMark): Promise<void>;
  /** The store's error for a write refused because the lock expired (`code: 'lock_lost'`). */
  lockLost(): Error;
}

/** A store's own commands (or statements): its lease and its writes. */
export type StoreCommands = Lease & StoreWrites;

export class StoredTokens {
  readonly #site: StoreFailureSite;
  readonly #cipher: TokenCipher | undefined;
  readonly #commands: StoreCommands;
  readonly #lock: LeaseLock;
  #seen: Seen | undefined;

  /**
   * `site`: the store and key (the value's encryption is bound to `site.key`), named by its errors; `times`: the
   * store's checked `lockTtlMs` and `lockWaitMs` (`lockTimes`).
   */
  constructor(site: StoreFailureSite, cipher: TokenCipher | undefined, commands: StoreCommands, times: { ttlMs: number; waitMs: number }) {
    this.#site = site;
    this.#cipher = cipher;
    this.#commands = commands;
    this.#lock = new LeaseLock(commands, { ...times, values: this });
  }

  /** `TokenStore.get`: a copy of the stored tokens, or `undefined`. */
  async get(): Promise<TokenSet | undefined> {
    const { tokens } = await this.decode(await this.#commands.read());
    return tokens && copyTokenSet(tokens);
  }

  /** `TokenStore.getGrant`: a copy of the stored tokens, and the mark, read in one step. */
  async getGrant(): Promise<StoredGrant> {
    const { value, reconnect, refreshedAt } = await this.#commands.readGrant();
    const { tokens } = await this.decode(value);
    return { tokens: tokens && copyTokenSet(tokens), reconnect, refreshedAt };
  }

  /**
   * `TokenStore.markReauthorizationRequired`: marks the grant dead while the key still holds the `refused` tokens
   * (the value last seen, or read again) and no mark; `true` when this call set it.
   */
  async mark(reason: ReauthorizationReason, refused: TokenSet): Promise<boolean> {
    let seen = this.#seen;
    if (seen === undefined || seen.tokens?.refreshToken !== refused.refreshToken) seen = await this.decode(await this.#commands.read());
    if (seen.raw === null || seen.tokens?.refreshToken !== refused.refreshToken) return false;
    return this.#commands.markIfUnchanged(seen.raw, { reason, since: Date.now() });
  }

  /** `TokenStore.delete`: removes the tokens, leaving a mark (`no_tokens`) that keeps them from being written back. */
  async delete(): Promise<void> {
    await this.#commands.remove({ reason: 'no_tokens', since: Date.now() });
    this.#seen = undefined;
  }

  /** `TokenStore.lock`: runs `fn` holding the lease lock. */
  lock<T>(fn: () => Promise<T>, options?: TokenStoreLockOptions<T>): Promise<T> {
    return this.#lock.run(fn, options);
  }

  /** The value last read or written, if any. */
  get seen(): Seen | undefined {
    return this.#seen;
  }

  /** The stored form of `tokens`; a value that is not a TokenSet is a `ValidationError` before anything is written. */
  encode(tokens: TokenSet): Promise<string> {
    return encodeTokens(tokens, this.#site.key, this.#cipher);
  }

  /** Decodes a value read under the key, and remembers it (decoding again only when it changed). */
  async decode(reply: unknown): Promise<Seen> {
    const raw = reply === null || reply === undefined ? null : String(reply);
    const seen = this.#seen;
    if (seen !== undefined && seen.raw === raw) return seen;
    let tokens: TokenSet | undefined;
    try {
      tokens = raw === null ? undefined : await decodeTokens(raw, this.#site.key, this.#cipher);
    } catch (error) {
      throw error instanceof UnreadableValue ? unreadableTokens(this.#site, error.problem, error.detail) : error;
    }
    const fresh: Seen = { raw, tokens };
    this.#seen = fresh;
    return fresh;
  }

  /** Remembers a value just written. */
  remember(raw: string, tokens: TokenSet): void {
    this.#seen = { raw, tokens: copyTokenSet(tokens) };
  }

  /**
   * `TokenStore.set`: with `expectedRefreshToken`, the compare-and-set below;
   * else, inside the lock (`owner`), a write that lands only while the lock is still the holder's (`lockLost()`
   * otherwise); else a plain write.
   */
  async set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<boolean> {
    const value = await this.encode(tokens);
    const expected = options?.expectedRefreshToken;
    const writes = this.#commands;
    if (expected !== undefined) return this.#compareAndSet(tokens, expected, value);
    const owner = this.#lock.owner();
    if (owner === undefined) await writes.write(value);
    else if (!(await writes.writeIfOwner(value, owner))) throw writes.lockLost();
    this.remember(value, tokens);
    return true;
  }

  /**
   * The compare-and-set of `TokenStoreSetOptions.expectedRefreshToken`. Decided from the value last seen (what the
   * manager just read, in the usual case), so the write costs one step and no read; a change since then makes the
   * write refuse: read again (`read`) and decide again.
   */
  async #compareAndSet(tokens: TokenSet, expected: string, value: string): Promise<boolean> {
    const writes = this.#commands;
    let seen = this.#seen;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (seen === undefined || attempt > 0) seen = await this.decode(await writes.read());
      if (seen.raw !== null && !acceptsWrite(seen.tokens, tokens, { expectedRefreshToken: expected })) return false;
      if (await writes.writeIfUnchanged(seen.raw, value)) {
        this.remember(value, tokens);
        return true;
      }
    }
    return false;
  }
}

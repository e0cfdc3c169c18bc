/**
 * What the shared stores (`RedisTokenStore`, `PostgresTokenStore`) do alike with the value under a key: encode and
 * decode it (token-codec.ts: JSON, sealed by the cipher when the store has an encryption key), remember the value
 * last read or written (so a compare-and-set needs no read first), and the compare-and-set itself: decided from the
 * decoded tokens (`acceptsWrite`), made atomic by a write of the store's that lands only while the key still holds
 * exactly the value read.
 */
import { acceptsWrite, copyTokenSet } from '../oauth/token-set.js';
import type { TokenSet } from '../oauth/types.js';
import { StoredTokensUnreadableError } from './errors.js';
import type { TokenCipher } from './token-cipher.js';
import { decodeTokens, encodeTokens } from './token-codec.js';

/** The value last read or written under a store's key (`null`: none), and its tokens. */
export interface Seen {
  readonly raw: string | null;
  readonly tokens: TokenSet | undefined;
}

/**
 * Writes `value` only while the key holds exactly `current` (`null`: nothing, or no tokens); `true` when written.
 * One atomic step of the store (a Lua script, one SQL statement).
 */
export type WriteIfUnchanged = (current: string | null, value: string) => Promise<boolean>;

export class StoredTokens {
  readonly #key: string;
  readonly #cipher: TokenCipher | undefined;
  readonly #unreadable: (error: StoredTokensUnreadableError) => Error;
  #seen: Seen | undefined;

  /** `unreadable`: the store's own error for a value it cannot read (default: Redis's `StoredTokensUnreadableError`). */
  constructor(key: string, cipher: TokenCipher | undefined, unreadable: (error: StoredTokensUnreadableError) => Error = itself) {
    this.#key = key;
    this.#cipher = cipher;
    this.#unreadable = unreadable;
  }

  /** The value last read or written, if any. */
  get seen(): Seen | undefined {
    return this.#seen;
  }

  /** The stored form of `tokens`; a value that is not a TokenSet is a `ValidationError` before anything is written. */
  encode(tokens: TokenSet): Promise<string> {
    return encodeTokens(tokens, this.#key, this.#cipher);
  }

  /** Decodes a value read under the key, and remembers it (decoding again only when it changed). */
  async decode(reply: unknown): Promise<Seen> {
    const raw = reply === null || reply === undefined ? null : String(reply);
    const seen = this.#seen;
    if (seen !== undefined && seen.raw === raw) return seen;
    let tokens: TokenSet | undefined;
    try {
      tokens = raw === null ? undefined : await decodeTokens(raw, this.#key, this.#cipher);
    } catch (error) {
      throw error instanceof StoredTokensUnreadableError ? this.#unreadable(error) : error;
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
   * The compare-and-set of `TokenStoreSetOptions.expectedRefreshToken`. Decided from the value last seen (what the
   * manager just read, in the usual case), so the write costs one step and no read; a change since then makes the
   * write refuse: read again (`read`) and decide again.
   */
  async compareAndSet(tokens: TokenSet, expected: string, value: string, read: () => Promise<unknown>, write: WriteIfUnchanged): Promise<boolean> {
    let seen = this.#seen;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (seen === undefined || attempt > 0) seen = await this.decode(await read());
      if (seen.raw !== null && !acceptsWrite(seen.tokens, tokens, { expectedRefreshToken: expected })) return false;
      if (await write(seen.raw, value)) {
        this.remember(value, tokens);
        return true;
      }
    }
    return false;
  }
}

/** The default `unreadable`: Redis's own error as it is (one function for every store, not a closure per store). */
function itself(error: StoredTokensUnreadableError): Error {
  return error;
}

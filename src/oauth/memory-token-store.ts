/**
 * The default token store: one user's tokens in this process's memory.
 */
import { inspectAs } from './inspect.js';
import { acceptsWrite, copyTokenSet, describeTokens } from './token-set.js';
import type { ReauthorizationReason } from './errors.js';
import type { ReconnectMark, StoredGrant, TokenSet, TokenStore, TokenStoreSetOptions } from './types.js';

/**
 * Keeps one TokenSet in memory. Enough for a script or a single server process; tokens are lost on restart,
 * so persist them with the manager's `onTokens` or use a shared store (e.g. `RedisTokenStore`) in production.
 * It has no `lock`: within one process the managers of a user share one refresh per refresh token, even when each
 * has its own store (a manager made per request).
 *
 * @example
 * const store = new MemoryTokenStore(tokensFromDatabase)
 * const manager = new TokenManager({ oauth, store })
 */
export class MemoryTokenStore implements TokenStore {
  #tokens: TokenSet | undefined;
  /** Set while the grant is marked dead (or the tokens removed): cleared by the next write of tokens. */
  #mark: ReconnectMark | undefined;
  #refreshedAt: number | undefined;

  constructor(tokens?: TokenSet) {
    this.#tokens = tokens === undefined ? undefined : copyTokenSet(tokens);
    // Shown by console.log / util.inspect: whether tokens are held and until when, never the tokens.
    inspectAs(this, () => `MemoryTokenStore { ${describeTokens(this.#tokens)} }`);
  }

  /** A copy of the stored tokens, or `undefined`. */
  async get(): Promise<TokenSet | undefined> {
    return this.#tokens === undefined ? undefined : copyTokenSet(this.#tokens);
  }

  /**
   * Stores a copy of `tokens`; with `expectedRefreshToken`, only when the store still holds that refresh token
   * (or nothing, or these tokens already), else returns `false` and keeps what it holds.
   */
  async set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<boolean> {
    if (!acceptsWrite(this.#tokens, tokens, options)) return false;
    // Removed on purpose (`delete`): only a new sign-in (no `expectedRefreshToken`) stores tokens again.
    if (this.#tokens === undefined && this.#mark !== undefined && options?.expectedRefreshToken !== undefined) return false;
    this.#tokens = copyTokenSet(tokens);
    this.#mark = undefined;
    this.#refreshedAt = Date.now();
    return true;
  }

  /** The tokens, the mark and when the tokens were written (see `TokenStore.getGrant`). */
  async getGrant(): Promise<StoredGrant> {
    const mark = this.#mark;
    return { tokens: await this.get(), reconnect: mark && { ...mark }, refreshedAt: this.#refreshedAt };
  }

  /** Marks the grant dead while the store still holds `refused` and no mark; `true` when this call set it. */
  async markReauthorizationRequired(reason: ReauthorizationReason, refused: TokenSet): Promise<boolean> {
    if (this.#mark !== undefined || this.#tokens === undefined || this.#tokens.refreshToken !== refused.refreshToken) return false;
    this.#mark = { reason, since: Date.now() };
    return true;
  }

  /** Removes the tokens, leaving a mark (`no_tokens`) until the next `set` without `expectedRefreshToken`. */
  async delete(): Promise<void> {
    this.#tokens = undefined;
    this.#refreshedAt = undefined;
    this.#mark = { reason: 'no_tokens', since: Date.now() };
  }

  /** What `JSON.stringify` shows: whether tokens are held, never the tokens. */
  toJSON(): {
    /** Whether a TokenSet is stored. */
    hasTokens: boolean;
  } {
    return { hasTokens: this.#tokens !== undefined };
  }
}

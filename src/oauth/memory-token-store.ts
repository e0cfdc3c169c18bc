/**
 * The default token store: one user's tokens in this process's memory.
 */
import { inspectAs } from './inspect.js';
import { acceptsWrite, copyTokenSet, describeTokens } from './token-set.js';
import type { TokenSet, TokenStore, TokenStoreSetOptions } from './types.js';

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
    this.#tokens = copyTokenSet(tokens);
    return true;
  }

  /** What `JSON.stringify` shows: whether tokens are held, never the tokens. */
  toJSON(): {
    /** Whether a TokenSet is stored. */
    hasTokens: boolean;
  } {
    return { hasTokens: this.#tokens !== undefined };
  }
}

/**
 * The default token store: one user's tokens in this process's memory.
 */
import { inspectAs } from './inspect.js';
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
    this.#tokens = tokens === undefined ? undefined : copy(tokens);
    // Shown by console.log / util.inspect: whether tokens are held and until when, never the tokens.
    inspectAs(this, () => `MemoryTokenStore { ${describeTokens(this.#tokens)} }`);
  }

  /** A copy of the stored tokens, or `undefined`. */
  async get(): Promise<TokenSet | undefined> {
    return this.#tokens === undefined ? undefined : copy(this.#tokens);
  }

  /**
   * Stores a copy of `tokens`; with `expectedRefreshToken`, only when the store still holds that refresh token
   * (or nothing, or these tokens already), else returns `false` and keeps what it holds.
   */
  async set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<boolean> {
    if (!acceptsWrite(this.#tokens, tokens, options)) return false;
    this.#tokens = copy(tokens);
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

/**
 * The compare-and-set rule of `TokenStoreSetOptions.expectedRefreshToken`, for stores that hold the decoded
 * TokenSet: write when nothing is stored, when the stored refresh token is the expected one, or when the stored
 * tokens are the very ones being written (a repeated write).
 */
export function acceptsWrite(stored: TokenSet | undefined, tokens: TokenSet, options: TokenStoreSetOptions | undefined): boolean {
  const expected = options?.expectedRefreshToken;
  if (expected === undefined || stored === undefined) return true;
  return stored.refreshToken === expected || (stored.accessToken === tokens.accessToken && stored.refreshToken === tokens.refreshToken);
}

/** Copies so that a caller mutating the object it got (or gave) cannot change the stored tokens (every store). */
export function copy(tokens: TokenSet): TokenSet {
  return { ...tokens, scopes: [...tokens.scopes] };
}

/** "expiresAt: 2025-01-01T00:00:00.000Z, scopes: posts:read": safe facts about a TokenSet, for inspect output. */
export function describeTokens(tokens: TokenSet | undefined): string {
  if (tokens === undefined) return 'hasTokens: false';
  // Outside Date's range (±8.64e15 ms) toISOString would throw inside util.inspect.
  if (!Number.isFinite(tokens.expiresAt) || Math.abs(tokens.expiresAt) > 8.64e15) return 'hasTokens: true';
  return `hasTokens: true, expiresAt: ${new Date(tokens.expiresAt).toISOString()}, scopes: '${tokens.scopes.join(' ')}'`;
}

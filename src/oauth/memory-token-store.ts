/**
 * The default token store: one user's tokens in this process's memory.
 */
import { inspectAs } from './inspect.js';
import type { TokenSet, TokenStore } from './types.js';

/**
 * Keeps one TokenSet in memory. Enough for a script or a single server process; tokens are lost on restart,
 * so persist them with the manager's `onTokens` or use a shared store (e.g. `RedisTokenStore`) in production.
 * It has no `lock`: within one process the TokenManager already lets only one refresh run at a time.
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

  /** Stores a copy of `tokens`. */
  async set(tokens: TokenSet): Promise<void> {
    this.#tokens = copy(tokens);
  }

  /** What `JSON.stringify` shows: whether tokens are held, never the tokens. */
  toJSON(): {
    /** Whether a TokenSet is stored. */
    hasTokens: boolean;
  } {
    return { hasTokens: this.#tokens !== undefined };
  }
}

/** Copies so that a caller mutating the object it got (or gave) cannot change the stored tokens. */
function copy(tokens: TokenSet): TokenSet {
  return { ...tokens, scopes: [...tokens.scopes] };
}

/** "expiresAt: 2025-01-01T00:00:00.000Z, scopes: posts:read": safe facts about a TokenSet, for inspect output. */
export function describeTokens(tokens: TokenSet | undefined): string {
  if (tokens === undefined) return 'hasTokens: false';
  if (!Number.isFinite(tokens.expiresAt)) return 'hasTokens: true';
  return `hasTokens: true, expiresAt: ${new Date(tokens.expiresAt).toISOString()}, scopes: '${tokens.scopes.join(' ')}'`;
}

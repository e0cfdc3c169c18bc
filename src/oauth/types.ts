/**
 * Shapes shared by the OAuth helper, the token manager, the request pipeline and the token stores.
 */

/** The scopes of the service (spec section 5). */
export type Scope = 'accounts:read' | 'posts:read' | 'posts:write' | 'media:write' | 'analytics:read';

/** Every scope of the service, in the spec's order. */
export const SCOPES: readonly Scope[] = [
  'accounts:read',
  'posts:read',
  'posts:write',
  'media:write',
  'analytics:read',
];

/**
 * A user's tokens, normalized (see the Assumptions table in the README). A plain JSON-safe object:
 * `JSON.parse(JSON.stringify(tokens))` gives the same TokenSet back, so any store can keep it.
 * Treat it as a password: it holds the refresh token.
 */
export interface TokenSet {
  /** The bearer token sent as `Authorization: Bearer …`. */
  accessToken: string;
  /** Present when the service issued one; a refresh that returns none keeps the previous one. */
  refreshToken?: string;
  /** When the access token expires, in epoch milliseconds, counted from when the token request left. */
  expiresAt: number;
  /** Granted scopes: the `scope` of the answer, or the scopes asked for when it has none. */
  scopes: string[];
  /** Always `'bearer'` (RFC 6750); the service's `token_type` is matched case-insensitively. */
  tokenType: 'bearer';
}

/**
 * Where the token manager keeps one user's tokens. `MemoryTokenStore` serves one process; a store shared by
 * several processes (for example `RedisTokenStore`) also implements `lock` so that only one of them refreshes.
 */
export interface TokenStore {
  /** The stored TokenSet, or `undefined` when there is none yet. */
  get(): Promise<TokenSet | undefined>;
  /** Replaces the stored TokenSet (after the code exchange and after every refresh). */
  set(tokens: TokenSet): Promise<void>;
  /**
   * Runs `fn` while holding a lock shared by every process using this store. The token manager refreshes
   * inside it, re-reading the store first, so a waiter uses the holder's new tokens instead of refreshing again.
   */
  lock?<T>(fn: () => Promise<T>): Promise<T>;
}

/** What the request pipeline needs from a token source; `TokenManager` implements it. */
export interface AccessTokenProvider {
  /** A token valid for at least the manager's margin, refreshed first when needed. */
  getAccessToken(): Promise<string>;
  /**
   * Called after the service answered 401 to `rejectedAccessToken`: returns a newer token, refreshing only
   * if the store does not already hold one newer than the rejected token.
   */
  forceRefresh(rejectedAccessToken: string): Promise<string>;
}

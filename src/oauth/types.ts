/**
 * Shapes shared by the OAuth helper, the token manager, the request pipeline and the token stores.
 */
import type { ReauthorizationReason } from './errors.js';

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
  /**
   * The user these tokens belong to, stamped by `UserClients` (the `userId` it acts for) into every TokenSet it
   * stores: a store that returns tokens stamped with another user id (a wrong key, a cache mix-up) is refused with a
   * `TokenStoreError`. Absent on tokens stored before the stamp and on those of a plain `TokenManager`; never sent
   * to the service.
   */
  userId?: string;
}

/** What `TokenManager` tells `TokenStore.set` about a write. */
export interface TokenStoreSetOptions {
  /**
   * The refresh token of the TokenSet these tokens were refreshed from. A store that can compare-and-set writes
   * only when it still holds that refresh token, already holds `tokens`, or holds nothing (it lost its data:
   * these are then the newest tokens there are), and otherwise leaves what it holds and returns `false`. So a
   * late or repeated write can never put older tokens over a newer rotation. Absent for `setTokens` (a new
   * sign-in replaces whatever is stored).
   */
  expectedRefreshToken?: string | undefined;
}

/**
 * Where the token manager keeps one user's tokens. `MemoryTokenStore` serves one process; a store shared by
 * several processes (for example `RedisTokenStore`) also implements `lock` so that only one of them refreshes,
 * and honours `expectedRefreshToken` atomically so that no write ever moves it backwards.
 */
export interface TokenStore {
  /** The stored TokenSet, or `undefined` when there is none yet. */
  get(): Promise<TokenSet | undefined>;
  /**
   * Stores `tokens` (after the code exchange and after every refresh). With `options.expectedRefreshToken`,
   * a compare-and-set: return `false` when the write was refused because the store holds other tokens (see
   * {@link TokenStoreSetOptions}); the manager then re-reads and uses those. A store that ignores the option and
   * returns nothing keeps working; the manager still re-reads before repeating a write whose outcome it does not
   * know, but only an atomic compare-and-set closes the race between processes.
   */
  set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<void | boolean>;
  /**
   * Runs `fn` while holding a lock shared by every process using this store. The token manager refreshes
   * inside it, re-reading the store first, so a waiter uses the holder's new tokens instead of refreshing again.
   * `options` may be ignored (a store that ignores them just waits for the lock).
   */
  lock?<T>(fn: () => Promise<T>, options?: TokenStoreLockOptions<T>): Promise<T>;
  /**
   * Optional, with `markReauthorizationRequired`: the stored tokens and the store's mark, read together in one step.
   * The manager reads through it instead of `get()`: a grant marked dead (or tokens removed by `delete()`) fails at
   * once with `ReauthorizationRequiredError`, in every process, without a token request or an API call.
   */
  getGrant?(): Promise<StoredGrant>;
  /**
   * Optional: called once the service refused the stored refresh token (`invalid_grant`, after the manager re-read
   * the store and found the refused tokens still there, and the access token held has expired), just before the
   * manager throws `ReauthorizationRequiredError`. `refused`: the refused tokens. A store that records that a user must
   * connect again (`ReconnectMark`: the built-in stores) sets the mark here, only while it still holds `refused` and no
   * mark, and clears it on its next write of tokens (a `connect`). Return whether this call set the mark: across the
   * processes sharing the store, only the one that set it reports the dead grant (`onReauthorizationRequired`). A store
   * that returns nothing (or has no `getGrant`) keeps the report per process. Bounded by `storeTimeoutMs`; a failure
   * is ignored (the `ReauthorizationRequiredError` is what the caller gets).
   */
  markReauthorizationRequired?(reason: ReauthorizationReason, refused: TokenSet): Promise<void | boolean>;
  /**
   * Optional: removes the stored tokens for good (`users.disconnect`). A store with marks leaves one (reason
   * `no_tokens`), so that a manager of another process holding the tokens never writes them back (a compare-and-set
   * against "nothing stored" is refused while it is there); the next write of tokens (`connect`) clears it.
   */
  delete?(): Promise<void>;
}

/** A store's record that a user's grant is dead (or their tokens were removed), until the next write of tokens. */
export interface ReconnectMark {
  /** Why: the `reason` of the `ReauthorizationRequiredError` that ended the grant (`no_tokens`: removed by `delete()`). */
  reason: ReauthorizationReason;
  /** When the mark was set, in epoch milliseconds. */
  since: number;
}

/** What `TokenStore.getGrant` reads in one step. */
export interface StoredGrant {
  /** The stored TokenSet, or `undefined`. */
  tokens: TokenSet | undefined;
  /** Present while the store marks the grant dead (or removed). */
  reconnect?: ReconnectMark | undefined;
  /** When tokens were last written (a refresh or a connect), in epoch milliseconds, where the store keeps it. */
  refreshedAt?: number | undefined;
}

/** What `TokenManager` passes to `TokenStore.lock`. */
export interface TokenStoreLockOptions<T> {
  /**
   * For a store that can watch its tokens while another process holds the lock (RedisTokenStore reads them as it
   * waits, instead of retrying the lock): called with each new value the store holds. A result other than
   * `undefined` ends the wait: `lock()` resolves with it without taking the lock or running `fn`. The manager
   * returns the holder's refreshed tokens here, so waiting for another process's refresh costs a read, not a lock.
   */
  whileWaiting?: (stored: TokenSet | undefined) => T | undefined;
  /**
   * For a store whose lock is a lease that expires: when the lease is taken from a holder whose lease expired without
   * being released (its process stalled or died, or its store was down past the lease while it saved refreshed tokens),
   * how long to watch the tokens (`whileWaiting`) for that holder's save before running `fn`, in ms (the stores of
   * the SDK: one lease at most). The holder's refresh may have rotated the refresh token the store still holds:
   * refreshing with it at once could get the grant revoked. The manager passes `storeTimeoutMs` + 1 s (a live holder
   * retries its save at least every second).
   */
  pendingSaveMs?: number;
  /**
   * For a store whose lock is a lease that expires: called before `fn` runs when the lease was taken from a holder
   * whose lease expired without being released (its process died or stalled, maybe between a refresh's answer and
   * its save). The manager's refresh inside is then a resend of one whose outcome is unknown: refused, it is reported
   * as `refresh_outcome_unknown`.
   */
  onTakeover?: () => void;
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

/** What the manager needs from the OAuth side: `OAuthClient` implements it. */
export interface TokenRefresher {
  /** Exchanges the refresh token in `previous` for a new TokenSet (see `OAuthClient.refresh`). */
  refresh(previous: TokenSet): Promise<TokenSet>;
  /**
   * The longest a refresh can take, in ms (`OAuthClient`'s `timeoutMs`).
   * @deprecated Not read any more: a store's lock no longer lasts a refresh's bound (see the stores' `lockTtlMs`).
   */
  readonly timeoutMs?: number;
  /**
   * Optional: revokes the grant of `tokens` at the service (`OAuthClient.revoke`, RFC 7009), `users.disconnect()` calls
   * it; resolves `false` when nothing was sent (no revocation endpoint configured).
   */
  revoke?(tokens: TokenSet): Promise<boolean>;
}

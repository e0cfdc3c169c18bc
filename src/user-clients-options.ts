/**
 * The options of `new UserClients(…)`: in a file of their own, as the client's are (client-options.ts), so that the
 * engine (user-clients.ts) reads top to bottom.
 */
import type { PostSchedOverrides } from './client.js';
import type { ReauthorizationRequiredError } from './oauth/errors.js';
import type { TokenManagerOptions } from './oauth/token-manager.js';
import type { TokenRefresher, TokenSet, TokenStore } from './oauth/types.js';
import type { RateLimiterLike } from './http/rate-limiter.js';
import type { TokenSpace } from './store/grant-space.js';

/**
 * Options of `new UserClients(…)`.
 *
 * @example
 * const options: UserClientsOptions = {
 *   oauth,
 *   baseUrl: 'https://api.postsched.example',
 *   store: (userId) => new RedisTokenStore({ redis, key: `postsched:tokens:{${userId}}`, encryptionKey }),
 *   onReauthorizationRequired: (userId) => db.markDisconnected(userId),
 * }
 */
export interface UserClientsOptions {
  /** Performs the refreshes: your `OAuthClient`. */
  oauth: TokenRefresher;
  /** The service's base URL, the one `OAuthClient` takes: `/oauth/token` and the API routes (`/posts`) are under it, with the service's version prefix if it has one (`https://api.postsched.example`; the mock's `http://127.0.0.1:4010`). */
  baseUrl: string | URL;
  /**
   * Makes the `TokenStore` of a user, called whenever that user is not in the cache (first use, or after an
   * eviction or `forget`). It must return a store over the same stored tokens each time: a `RedisTokenStore` on the
   * user's key, or your own store over your database. One that returns nothing (a missing `return`) is refused with a
   * `ValidationError` when the user is first used.
   *
   * Default: a `MemoryTokenStore` per user, kept in this process's memory for as long as this `UserClients` lives
   * (eviction and `forget` drop the user's manager and client, never the only copy of their tokens). That is one
   * process only, and the tokens are gone on restart: persist them with `onTokens`, and give a store when you run
   * more than one process.
   *
   * Or a `PostgresTokenTable` / `RedisTokenSpace` (the stores of a whole table or key prefix, made with their shared
   * options): the same stores, and `keepGrantsAlive()` besides.
   *
   * @example
   * store: (userId) => new RedisTokenStore({ redis, key: `postsched:tokens:{${userId}}`, encryptionKey })
   * // or: store: new RedisTokenSpace({ redis, encryptionKey })
   */
  store?: ((userId: string) => TokenStore) | TokenSpace;
  /**
   * Called with every TokenSet a user's store receives: the ones `connect()` stores, and each one a refresh
   * obtains (after the store wrote it, before the new access token is used). Awaited; if it throws, `connect()` or
   * the call that refreshed fails with a `TokenStoreError` (see `TokenManagerOptions.onTokens`).
   *
   * @example
   * onTokens: (userId, tokens) => db.users.update(userId, { postschedTokens: JSON.stringify(tokens) })
   */
  onTokens?: (userId: string, tokens: TokenSet) => void | Promise<void>;
  /**
   * Called when a call for a user fails with `ReauthorizationRequiredError` because a grant that existed died (the
   * refresh token was refused, or none was given): the user must connect again. Not for a user who never connected
   * (no tokens stored, `reason: 'no_tokens'`): that error reaches the call only. Not awaited; the error still reaches
   * the caller. If it throws or rejects, this process's next failure for the user calls it again.
   * - With a store that marks dead grants (`MemoryTokenStore`, `RedisTokenStore`, `PostgresTokenStore`: see
   *   `TokenStore.getGrant`): once per dead grant across every process sharing the store, by the process that marked it.
   * - With a store without marks (your own, without `getGrant`): once per cached user and process until `connect()`
   *   succeeds for them; a user evicted meanwhile may be reported again.
   *
   * @example
   * onReauthorizationRequired: (userId, error) => db.users.update(userId, { postschedDisconnected: error.reason })
   */
  onReauthorizationRequired?: (userId: string, error: ReauthorizationRequiredError) => void | Promise<void>;
  /**
   * Called once a `connect()` stored new tokens for a user whose grant was marked dead (`grantStatus` said
   * `needs_reconnect`), by the process whose `connect()` it was; with a store without marks, when this process had
   * reported the user (`onReauthorizationRequired`). Not awaited; a failure is ignored.
   *
   * @example
   * onReconnected: (userId) => db.users.update(userId, { postschedDisconnected: null })
   */
  onReconnected?: (userId: string) => void | Promise<void>;
  /**
   * How many users' managers and clients are cached; past it the least recently used is dropped (its tokens stay in
   * its store). A user with a token call in flight (a refresh, a store read, `connect`) is dropped only once it is
   * done, and one whose refreshed tokens could not be saved (`store.set` or `onTokens` failed) only once they are
   * (their next call saves them first), so the cache may hold more. Default 10 000.
   */
  maxUsers?: number;
  /**
   * What every user's `PostSched` gets: every `PostSchedOptions` field but `baseUrl` (above) and `auth` (the user's
   * `TokenManager`). Checked once, here; the clients share it.
   *
   * @example
   * clientOptions: { appInfo: { name: 'MyApp', version: '1.2.3' }, timeoutMs: 10_000, onResponse: countStatus }
   */
  clientOptions?: PostSchedOverrides;
  /**
   * What every user's `TokenManager` gets besides `oauth`, the store and `onTokens` (above): `refreshMarginMs`,
   * `storeTimeoutMs`, `lockTimeoutMs`.
   *
   * @example
   * managerOptions: { refreshMarginMs: 120_000 }
   */
  managerOptions?: Omit<TokenManagerOptions, 'oauth' | 'store' | 'onTokens' | 'userId' | 'onMarked'>;
  /**
   * The backoff after a 429 and the pacing of a stated quota (`RateLimit-*`), per user: a `RedisRateLimiter`
   * (`@postsched/sdk/redis`) shares them with every process. Default: a `RateLimiter` of this `UserClients`, shared by all clients of a user in
   * this process. README, "Rate limits".
   */
  rateLimiter?: RateLimiterLike;
}

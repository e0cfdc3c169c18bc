/**
 * `UserClients`: one object per app that hands out a `PostSched` acting for each connected user, keeping a bounded
 * cache of their token managers (least recently used evicted), as octokit's `App.getInstallationOctokit` does for
 * installations. The tokens live in each user's `TokenStore`; the cache holds only what is cheap to make again.
 */
import { PostSched, type PostSchedOptions } from './client.js';
import type { UserClientsOptions } from './user-clients-options.js';
import { CLIENT_SETUP, setUpClient, type ClientSetup } from './client-setup.js';
import { checkOptions, constructorOptions, integerOption, invalidOption, optionalFunction, optionNames, refusal } from './core/invalid-option.js';
import { checkWellFormedId } from './core/well-formed-id.js';
import { ReauthorizationRequiredError, TokenStoreError } from './oauth/errors.js';
import { inspectAs } from './oauth/inspect.js';
import { MemoryTokenStore } from './oauth/memory-token-store.js';
import { TokenManager, type TokenManagerOptions } from './oauth/token-manager.js';
import type { TokenRefresher, TokenSet, TokenStore } from './oauth/types.js';
import type { RateLimitState } from './http/rate-limiter.js';
import type { GrantStatus, KeepGrantsAliveOptions, KeepGrantsAliveResult, TokenSpace } from './store/grant-space.js';

declare global {
  interface SymbolConstructor {
    /** `Symbol.asyncDispose` (ES2026 explicit resource management; Node ≥ 20.4, Bun, Deno), for `await using`. */
    readonly asyncDispose: unique symbol;
  }
}

/** Where runtimes without `Symbol.asyncDispose` look for it (what TypeScript's and esbuild's `await using` use). */
export type { UserClientsOptions } from './user-clients-options.js';

const ASYNC_DISPOSE: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? (Symbol.for('Symbol.asyncDispose') as never);

/** Default `maxUsers`. */
const DEFAULT_MAX_USERS = 10_000;

const USER_CLIENTS_OPTIONS = /* @__PURE__ */ optionNames<UserClientsOptions>({
  oauth: 0, baseUrl: 0, store: 0, onTokens: 0, onReauthorizationRequired: 0, onReconnected: 0, maxUsers: 0, clientOptions: 0, managerOptions: 0, rateLimiter: 0,
});
const MANAGER_OPTIONS = /* @__PURE__ */ optionNames<NonNullable<UserClientsOptions['managerOptions']>>({ refreshMarginMs: 0, storeTimeoutMs: 0, lockTimeoutMs: 0 });

/** What a user's manager reports to its UserClients. */
interface Owner {
  settled(user: UserTokenManager, error: unknown): void;
}

/**
 * A user's `TokenManager` as UserClients caches it: it counts its token calls in flight (so the user is never
 * dropped mid-refresh, and a second manager never races this one), reports `ReauthorizationRequiredError`, and
 * holds the user's client once made. What the app gets from `users.manager()` is this object, typed `TokenManager`.
 */
class UserTokenManager extends TokenManager {
  /** Token calls in flight: a refresh, a store read or write. */
  busy = 0;
  /** Whether `onReauthorizationRequired` was called for this user since the last `connect()`. */
  reported = false;
  /** A dead grant's report whose `onReauthorizationRequired` failed: made again at this process's next failure. */
  owed: ReauthorizationRequiredError | undefined;
  /** Whether the FinalizationRegistry of dropped managers watches this one. */
  watched = false;
  /** TokenSets this manager obtained by refreshing (`keepGrantsAlive` tells its own refreshes from others'). */
  refreshes = 0;
  client: PostSched | undefined;

  constructor(
    options: TokenManagerOptions,
    readonly userId: string,
    readonly store: TokenStore,
    private readonly owner: Owner,
  ) {
    super(options);
  }

  override getAccessToken(): Promise<string> {
    const token = super.getAccessToken();
    // A fresh cached token is handed out without I/O: nothing to wait for.
    return this.peekAccessToken() === undefined ? this.#track(token) : token;
  }

  override forceRefresh(rejectedAccessToken: string): Promise<string> {
    return this.#track(super.forceRefresh(rejectedAccessToken));
  }

  override setTokens(tokens: TokenSet): Promise<void> {
    return this.#track(super.setTokens(tokens));
  }

  override getTokens(): Promise<TokenSet | undefined> {
    return this.#track(super.getTokens());
  }

  override saveUnsaved(): Promise<void> {
    return this.#track(super.saveUnsaved());
  }

  override grant(): ReturnType<TokenManager['grant']> {
    return this.#track(super.grant());
  }

  override removeTokens(): Promise<void> {
    return this.#track(super.removeTokens());
  }

  #track<T>(promise: Promise<T>): Promise<T> {
    this.busy++;
    // A side branch: the caller gets `promise` itself, rejection and all.
    promise.then(
      () => this.owner.settled(this, undefined),
      (error: unknown) => this.owner.settled(this, error),
    );
    return promise;
  }
}

/**
 * One object per app that acts for many users: `client(userId)` is a `PostSched` for that user, backed by a
 * `TokenManager` over the user's `TokenStore`. Managers and clients are cached, at most `maxUsers` (least recently
 * used dropped first); the tokens stay in the stores, so a dropped user is made again, from the store, on next use.
 *
 * - One manager per user and process: concurrent calls for a user share one refresh; a user is never dropped from
 *   the cache while a token call of theirs is in flight, so a re-made manager cannot start a second refresh.
 * - `client(userId)` works for any user whose tokens are in the store, connected in this process or not (another
 *   process, an earlier run): the manager reads the store on first use. A user with no stored tokens gets
 *   `ReauthorizationRequiredError` (`no_tokens`) from their calls (not `onReauthorizationRequired`: they never connected).
 * - Cheap: a cached user costs about 1.4 KB of heap with a `MemoryTokenStore` (README, "Many users"). Call
 *   `users.client(userId)` per request rather than keeping clients around.
 * - Nothing secret shows in `util.inspect` or `JSON.stringify` output: only the counts.
 *
 * @example
 * import { OAuthClient, UserClients } from '@postsched/sdk'
 * import { RedisTokenStore } from '@postsched/sdk/redis'
 *
 * const users = new UserClients({
 *   oauth,
 *   baseUrl: 'https://api.postsched.example',
 *   store: (userId) => new RedisTokenStore({ redis, key: `postsched:tokens:{${userId}}`, encryptionKey }),
 *   onReauthorizationRequired: (userId) => db.markDisconnected(userId),
 * })
 * await users.connect(userId, await oauth.exchangeCode(callbackUrl, pending)) // the OAuth callback
 * const posts = await users.client(userId).posts.list().toArray()             // any later request
 */
export class UserClients {
  /**
   * Waits for every user's token calls in flight, those of a dropped user whose client a request still holds included
   * (their refreshes complete and are stored), saves refreshed tokens whose `store.set` or `onTokens` failed earlier,
   * then empties the cache; later calls to `client`, `manager` and `connect` throw. Tokens that still cannot be saved
   * (each store call and `onTokens` bounded by `storeTimeoutMs`): a `TokenStoreError` naming the users, kept so that
   * disposing again tries again. Nothing else is closed: the Redis client (or database) behind the stores is yours.
   *
   * @example
   * await using users = new UserClients({ oauth, baseUrl }) // disposed when the scope ends
   * // or, without `await using`:
   * await users[Symbol.asyncDispose]()
   */
  declare readonly [Symbol.asyncDispose]: () => Promise<void>;
  readonly #oauth: TokenRefresher;
  readonly #setup: ClientSetup;
  readonly #makeStore: ((userId: string) => TokenStore) | undefined;
  readonly #space: TokenSpace | undefined;
  /** Without a `store` option: each connected user's MemoryTokenStore, never evicted (the only copy of the tokens). */
  readonly #memoryStores: Map<string, TokenStore> | undefined;
  readonly #onTokens: UserClientsOptions['onTokens'];
  readonly #onReauthorizationRequired: UserClientsOptions['onReauthorizationRequired'];
  readonly #onReconnected: UserClientsOptions['onReconnected'];
  readonly #managerOptions: Omit<TokenManagerOptions, 'oauth' | 'store' | 'onTokens' | 'userId' | 'onMarked'>;
  readonly #maxUsers: number;
  /** The cache, least recently used first (a Map keeps insertion order; a use moves the user to the end). */
  readonly #users = new Map<string, UserTokenManager>();
  /**
   * Managers dropped from the cache that may still be in use (a caller holds the client; a request is on its way
   * to its token call): weakly held, and handed out again while alive, so a user never has two managers refreshing
   * at once in this process. Emptied as the garbage collector reclaims them.
   */
  readonly #dropped = typeof WeakRef === 'function' && typeof FinalizationRegistry === 'function' ? new Map<string, WeakRef<UserTokenManager>>() : undefined;
  readonly #reclaimed = this.#dropped === undefined ? undefined : new FinalizationRegistry<string>((userId) => {
    if (this.#dropped?.get(userId)?.deref() === undefined) this.#dropped?.delete(userId);
  });
  /** Who waits for a user's token calls to end (`forget`, dispose). */
  readonly #waiting = new Map<UserTokenManager, Array<() => void>>();
  readonly #owner: Owner = { settled: (user, error) => this.#settled(user, error) };
  #disposed = false;

  constructor(options: UserClientsOptions) {
    options = constructorOptions(options, USER_CLIENTS_OPTIONS, 'new UserClients()', '{ oauth, baseUrl }');
    const { clientOptions = {}, managerOptions = {} } = options;
    if (typeof managerOptions !== 'object' || managerOptions === null) invalidOption('managerOptions', 'must be an object of TokenManager options.');
    this.#managerOptions = checkOptions(managerOptions, MANAGER_OPTIONS, "new UserClients()'s managerOptions");
    // A manager as each user's will be: checks `oauth`, then refreshMarginMs, storeTimeoutMs and lockTimeoutMs.
    new TokenManager({ ...this.#managerOptions, oauth: options.oauth });
    this.#oauth = options.oauth;
    const { store } = options;
    this.#space = typeof (store as Partial<TokenSpace> | undefined)?.store === 'function' ? (store as TokenSpace) : undefined;
    this.#makeStore = this.#space === undefined ? optionalFunction(store as ((userId: string) => TokenStore) | undefined, 'store') : (userId) => this.#space!.store(userId);
    this.#memoryStores = options.store === undefined ? new Map() : undefined;
    this.#onTokens = optionalFunction(options.onTokens, 'onTokens');
    this.#onReauthorizationRequired = optionalFunction(options.onReauthorizationRequired, 'onReauthorizationRequired');
    this.#onReconnected = optionalFunction(options.onReconnected, 'onReconnected');
    this.#maxUsers = integerOption(options.maxUsers, 'maxUsers', DEFAULT_MAX_USERS, 1, Number.MAX_SAFE_INTEGER);
    if (typeof clientOptions !== 'object' || clientOptions === null) invalidOption('clientOptions', 'must be an object of PostSched options.');
    const client: Partial<PostSchedOptions> = checkOptions(clientOptions);
    for (const name of ['baseUrl', 'auth'] as const) {
      if (client[name] !== undefined) {
        invalidOption(`clientOptions.${name}`, name === 'auth' ? "is each user's TokenManager: leave it out." : 'goes in the top-level `baseUrl` option.', ['clientOptions', name]);
      }
    }
    // Checked once here (ValidationError naming the option), then shared by every user's client.
    this.#setup = setUpClient({ ...client, baseUrl: options.baseUrl, ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }) }, "new UserClients()'s clientOptions");
    Object.defineProperty(this, ASYNC_DISPOSE, { value: () => this.#dispose() });
    // Shown by console.log / util.inspect: counts only, never a user's tokens.
    inspectAs(this, () => `UserClients { cachedUsers: ${this.#users.size}, maxUsers: ${this.#maxUsers} }`);
  }

  /**
   * How many users are cached now: at most `maxUsers`, plus users kept while a token call of theirs is in flight.
   *
   * @example
   * metrics.gauge('postsched.cached_users', users.size)
   */
  get size(): number {
    return this.#users.size;
  }

  /**
   * Stores a user's tokens (the TokenSet from `oauth.exchangeCode()`, or tokens from your database) in their store,
   * waiting for a refresh of theirs in flight first; then calls `onTokens`. Their clients use them from now on, and
   * `onReauthorizationRequired` may be called again for them.
   *
   * @example
   * app.get('/callback', async (req, res) => {
   *   await users.connect(req.session.userId, await oauth.exchangeCode(req.originalUrl, req.session.oauth))
   *   res.redirect('/dashboard')
   * })
   */
  async connect(userId: string, tokens: TokenSet): Promise<void> {
    // The `await` forgotten before exchangeCode(): "has no accessToken" would not say so.
    if (typeof (tokens as { then?: unknown } | null)?.then === 'function') {
      invalidOption('tokens', 'got a Promise: await exchangeCode() first (`users.connect(userId, await oauth.exchangeCode(…))`).');
    }
    const user = this.#user(userId);
    // Whether this write clears a dead grant's mark (onReconnected); a store that cannot be read now has none to clear.
    const before = user.marks ? await user.grant().catch(() => undefined) : undefined;
    const wasDead = user.marks ? before?.tokens !== undefined && before.reconnect !== undefined : user.reported;
    await user.setTokens(tokens);
    user.reported = false;
    user.owed = undefined;
    this.#memoryStores?.set(userId, user.store);
    if (wasDead) this.#tell(() => this.#onReconnected?.(userId));
    const onTokens = this.#onTokens;
    if (onTokens === undefined) return;
    try {
      await onTokens(userId, tokens);
    } catch (error) {
      // A foreign error may quote the tokens: wrapped, scrubbed, never attached.
      throw new TokenStoreError('onTokens', error, [tokens.accessToken, tokens.refreshToken ?? '']);
    }
  }

  /**
   * A `PostSched` acting for `userId`: every call carries the user's access token, refreshed through their store
   * when it expires. The same object while the user stays cached; cheap to ask for on every request.
   *
   * @example
   * for await (const account of users.client(userId).accounts.list()) console.log(account.id)
   */
  client(userId: string): PostSched {
    const user = this.#user(userId);
    if (user.client === undefined) {
      const options = { [CLIENT_SETUP]: this.#setup, baseUrl: this.#setup.config.baseUrl, auth: user };
      user.client = new PostSched(options);
    }
    return user.client;
  }

  /**
   * The user's `TokenManager`, the one their client uses (for `getAccessToken()` in your own requests, or
   * `getTokens()`).
   *
   * @example
   * const token = await users.manager(userId).getAccessToken()
   */
  manager(userId: string): TokenManager {
    return this.#user(userId);
  }

  /**
   * The user's rate-limit state: until when their calls wait (after a 429 or `RateLimit-Remaining: 0`), and how many
   * wait in this process.
   *
   * @example
   * const { blockedUntil, queued } = users.rateLimit(userId)
   */
  rateLimit(userId: string): RateLimitState {
    checkUserId(userId);
    const limiter = this.#setup.config.rateLimiter;
    return limiter.state(limiter.keyOf(userId));
  }

  /**
   * The user's grant as their store holds it: `connected`, `needs_reconnect` (the grant is dead: `reason`, `since`)
   * or `none` (no tokens stored). One store read; no token request. A store without marks (see `TokenStore.getGrant`)
   * shows `needs_reconnect` only for a refusal this process saw.
   *
   * @example
   * const { status } = await users.grantStatus(userId)
   * if (status !== 'connected') showReconnectBanner()
   */
  async grantStatus(userId: string): Promise<GrantStatus> {
    const { tokens, reconnect, refreshedAt, refused } = await this.#user(userId).grant();
    const since = reconnect?.since;
    if (tokens === undefined) return { status: 'none' };
    const reason = reconnect?.reason ?? refused;
    return {
      status: reason === undefined ? 'connected' : 'needs_reconnect',
      ...(reason === undefined ? {} : { reason }),
      ...(since === undefined ? {} : { since }),
      ...(refreshedAt === undefined ? {} : { refreshedAt }),
    };
  }

  /**
   * Disconnects a user: waits for their token calls in flight, deletes their tokens from the store (`TokenStore.delete`;
   * every process then sees `none`, and a manager of another process never writes its copy back), drops them from the
   * cache, then revokes the refresh token at the service when the `OAuthClient` has a `revocationEndpoint` (RFC 7009;
   * a failure there is thrown, the tokens being deleted already). A process that holds a still-valid access token in
   * memory may use it until it expires unless the service revoked it.
   *
   * @example
   * await users.disconnect(userId) // the user's "disconnect Post Scheduler" button
   */
  async disconnect(userId: string): Promise<void> {
    const user = this.#user(userId);
    if (typeof user.store.delete !== 'function') throw refusal(`The store of user ${JSON.stringify(userId.slice(0, 64))} has no delete(): implement TokenStore.delete to disconnect users.`, []);
    const tokens = await user.getTokens();
    await user.removeTokens();
    user.reported = false;
    user.owed = undefined;
    this.#memoryStores?.delete(userId);
    await this.forget(userId);
    const oauth = this.#oauth;
    if (tokens !== undefined && typeof oauth.revoke === 'function') await oauth.revoke(tokens);
  }

  /**
   * Drops a user's manager and client from the cache, once their token calls in flight are done (so a refresh
   * completes and is stored), and once refreshed tokens whose saving failed earlier are saved (`store.set`, then
   * `onTokens`): if they still cannot be, it rejects with a `TokenStoreError` naming the user, who stays cached. The
   * tokens stay in the store: the next `client(userId)` reads them again (or gets the same manager back while
   * something still holds it).
   *
   * @example
   * await users.forget(userId)
   */
  async forget(userId: string): Promise<void> {
    checkUserId(userId);
    for (let user = this.#users.get(userId); user !== undefined; user = this.#users.get(userId)) {
      if (user.busy > 0) await this.#idle(user);
      else if (user.unsaved) await this.#saveUnsaved([user]);
      else {
        this.#drop(user);
        return;
      }
    }
  }

  /**
   * Refreshes every grant of the `store` (a `PostgresTokenTable` or a `RedisTokenSpace`) not refreshed for
   * `olderThanMs`, so that a refresh token the service ends when unused for weeks stays alive for users who do not
   * come back for a while. Fleet-safe: run it from a cron or a worker loop in any number of processes at once: each due
   * grant is claimed by one of them (Postgres `FOR UPDATE SKIP LOCKED`, a Redis index and a claim key), and refreshed
   * through the user's `TokenManager` under the store's lock, once across the fleet. Each grant has its slot in the
   * window (from a hash of the user's id), so the refreshes are spread evenly over it. Grants marked as needing
   * reconnection are skipped (0 requests); one that fails is counted and the sweep goes on. `onTokens` and
   * `onReauthorizationRequired` are called as for any refresh. docs/tokens.md, "Idle grants and the users to reconnect".
   *
   * @example
   * // every minute, in each worker:
   * const { refreshed, skipped, dead, failed } = await users.keepGrantsAlive({ olderThanMs: 7 * 86_400_000, concurrency: 4, signal })
   */
  keepGrantsAlive(options: KeepGrantsAliveOptions): Promise<KeepGrantsAliveResult> {
    const space = this.#space;
    if (this.#disposed) return Promise.reject(refusal('This UserClients was disposed: make a new one to keep grants alive.', []));
    if (space?.sweep === undefined) {
      return Promise.reject(refusal('keepGrantsAlive() needs the `store` option to be a PostgresTokenTable or a RedisTokenSpace (they list and claim the grants), not a function.', ['store']));
    }
    return space.sweep((userId, tokens) => this.#keepAlive(userId, tokens), options);
  }

  /** One due grant of the sweep: refreshed past `tokens` (read under the sweep's claim) by the user's manager. */
  async #keepAlive(userId: string, tokens: TokenSet | undefined): Promise<'refreshed' | 'skipped' | 'dead'> {
    if (tokens === undefined) return 'skipped';
    // The cached manager, or one held weakly (never two in this process), without moving hot users out of the cache.
    const user = this.#users.get(userId) ?? this.#dropped?.get(userId)?.deref() ?? this.#newUser(userId);
    if (!this.#users.has(userId)) this.#drop(user);
    const before = user.refreshes;
    try {
      await user.forceRefresh(tokens.accessToken);
    } catch (error) {
      if (error instanceof ReauthorizationRequiredError) return 'dead';
      throw error;
    }
    return user.refreshes > before ? 'refreshed' : 'skipped';
  }

  /** What `JSON.stringify` shows: counts only, never a user's tokens. */
  toJSON(): {
    /** How many users are cached. */
    cachedUsers: number;
    /** The cache's bound. */
    maxUsers: number;
  } {
    return { cachedUsers: this.#users.size, maxUsers: this.#maxUsers };
  }

  /** The cached user, moved to the most recently used end; or a new one, evicting the least recently used. */
  #user(userId: string): UserTokenManager {
    if (this.#disposed) throw refusal('This UserClients was disposed: make a new one to act for users again.', []);
    checkUserId(userId);
    const users = this.#users;
    let user = users.get(userId);
    if (user !== undefined) {
      users.delete(userId);
      users.set(userId, user);
      return user;
    }
    user = this.#dropped?.get(userId)?.deref() ?? this.#newUser(userId);
    this.#dropped?.delete(userId);
    this.#evict(this.#maxUsers - 1);
    users.set(userId, user);
    return user;
  }

  #newUser(userId: string): UserTokenManager {
    const store = this.#makeStore === undefined ? (this.#memoryStores?.get(userId) ?? new MemoryTokenStore()) : this.#makeStore(userId);
    // Not the manager's default MemoryTokenStore: the tokens would silently live in this process only.
    if (store === undefined) invalidOption('store', "returned undefined (a missing `return`?): it must return the user's TokenStore.");
    const onTokens = this.#onTokens;
    const options: TokenManagerOptions = { ...this.#managerOptions, oauth: this.#oauth, store, userId };
    options.onTokens = (tokens) => {
      user.refreshes++;
      return onTokens?.(userId, tokens);
    };
    // This process's mark of a dead grant is the one the store took: it reports it, the other processes do not.
    options.onMarked = (error) => this.#report(user, error);
    const user: UserTokenManager = new UserTokenManager(options, userId, store, this.#owner);
    return user;
  }

  /**
   * Drops least recently used users until at most `limit` are cached, skipping those with a token call in flight or
   * tokens to save (the manager holds their only copy).
   */
  #evict(limit: number): void {
    const users = this.#users;
    if (users.size <= limit) return;
    for (const user of users.values()) {
      if (user.busy > 0 || user.unsaved) continue;
      this.#drop(user);
      if (users.size <= limit) return;
    }
  }

  /** Out of the cache, into the weakly held managers that are handed out again while something still uses them. */
  #drop(user: UserTokenManager): void {
    this.#users.delete(user.userId);
    this.#dropped?.set(user.userId, new WeakRef(user));
    if (!user.watched) {
      user.watched = true;
      this.#reclaimed?.register(user, user.userId);
    }
  }

  /** A token call of `user` ended (`error`: how it failed, if it did). */
  #settled(user: UserTokenManager, error: unknown): void {
    user.busy--;
    if (error instanceof ReauthorizationRequiredError) this.#reauthorizationRequired(user, error);
    // A dropped manager (its client still held) that now holds unsaved tokens: held strongly again until they are saved.
    if (user.unsaved && !this.#users.has(user.userId)) {
      this.#dropped?.delete(user.userId);
      this.#users.set(user.userId, user);
    }
    if (user.busy > 0) return;
    const waiting = this.#waiting.get(user);
    if (waiting !== undefined) {
      this.#waiting.delete(user);
      for (const resume of waiting) resume();
    }
    this.#evict(this.#maxUsers); // it may have been kept past maxUsers while busy
  }

  /**
   * A call of `user` failed with `error`. A store with marks: the report was made by the process that marked the grant
   * (`#report`), here only made again when it failed. Without marks: once per process until `connect()`.
   */
  #reauthorizationRequired(user: UserTokenManager, error: ReauthorizationRequiredError): void {
    if (user.marks) {
      if (user.owed !== undefined) this.#report(user, user.owed);
      return;
    }
    // Only a grant that existed and died: a user who never connected (`no_tokens`) gets the error, not the callback.
    if (user.reported || error.reason === 'no_tokens') return;
    this.#report(user, error);
  }

  /** `onReauthorizationRequired` for `user`; should it fail, owed to this process's next failure for the user. */
  #report(user: UserTokenManager, error: ReauthorizationRequiredError): void {
    const callback = this.#onReauthorizationRequired;
    if (callback === undefined) return;
    user.reported = true;
    user.owed = undefined;
    this.#tell(
      () => callback(user.userId, error),
      () => {
        user.reported = false;
        user.owed = error;
      },
    );
  }

  /** Calls an app's callback, not awaited; `failed` on a throw or a rejection. */
  #tell(callback: () => void | Promise<void>, failed: () => void = noop): void {
    try {
      Promise.resolve(callback()).catch(failed);
    } catch {
      failed();
    }
  }

  /** Resolves once `user` has no token call in flight (at once for a manager already reclaimed). */
  #idle(user: UserTokenManager | undefined): Promise<void> {
    if (!user?.busy) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.#waiting.get(user);
      if (waiting === undefined) this.#waiting.set(user, [resolve]);
      else waiting.push(resolve);
    });
  }

  async #dispose(): Promise<void> {
    this.#disposed = true;
    // The dropped managers still in use too: a request that held a client may be refreshing through one.
    const dropped = [...(this.#dropped?.values() ?? [])].map((ref) => ref.deref());
    await Promise.all([...this.#users.values(), ...dropped].map((user) => this.#idle(user)));
    this.#dropped?.clear();
    try {
      await this.#saveUnsaved([...this.#users.values()].filter((user) => user.unsaved));
    } finally {
      // Those whose tokens are still unsaved stay: disposing again tries again.
      for (const user of this.#users.values()) if (!user.unsaved) this.#users.delete(user.userId);
    }
  }

  /**
   * Saves the refreshed tokens whose `store.set` or `onTokens` failed earlier, for each of `users`; rejects with a
   * `TokenStoreError` naming those whose tokens still could not be saved (bounded: each store call and `onTokens`
   * by `storeTimeoutMs`).
   */
  async #saveUnsaved(users: UserTokenManager[]): Promise<void> {
    const failed: Array<[string, unknown]> = [];
    await Promise.all(users.map((user) => user.saveUnsaved().catch((error: unknown) => void failed.push([user.userId, error]))));
    const [first] = failed;
    if (first === undefined) return;
    const [, error] = first;
    const names = failed.slice(0, 5).map(([userId]) => JSON.stringify(userId.slice(0, 64))).join(', ') + (failed.length > 5 ? ` and ${failed.length - 5} more` : '');
    throw new TokenStoreError(
      error instanceof TokenStoreError ? error.operation : 'set',
      undefined,
      [],
      `Could not save the refreshed tokens of user ${names} (${(error as Error).message}): kept in memory; the next call, forget() or dispose tries again.`,
      { cause: error },
    );
  }
}

function noop(): void {}

/** A user id is the app's own key for the user: any non-empty string. */
function checkUserId(userId: unknown): asserts userId is string {
  if (typeof userId !== 'string' || userId === '') invalidOption('userId', 'must be a non-empty string: your id of the user.');
  checkWellFormedId(userId, 'userId');
}

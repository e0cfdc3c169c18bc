/**
 * `RedisTokenStore`: one user's tokens in Redis, shared by every process of a backend, with a lock so the
 * whole fleet refreshes once. Node-only: the lock owner is tracked with `AsyncLocalStorage`
 * (`node:async_hooks`, also in Deno and Bun): one for the whole module, enabled only while some store holds its
 * lock, so stores cost the rest of the process nothing (Node 20's async hooks slow every promise while any
 * `AsyncLocalStorage` is enabled). The encryption is Web Crypto.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ValidationError } from '../errors.js';
import { checkOptions, integerOption, MAX_TIMEOUT_MS, optionNames } from '../invalid-option.js';
import { acceptsWrite, copy } from '../oauth/memory-token-store.js';
import type { TokenSet, TokenStore, TokenStoreLockOptions, TokenStoreSetOptions } from '../oauth/types.js';
import { LockLostError, LockTimeoutError, withHashTag } from './errors.js';
import { EXTEND_LOCK, RELEASE_LOCK, SET_IF_LOCK_OWNER, SET_IF_UNCHANGED } from './lock-scripts.js';
import { RedisConnection, type RedisClientLike } from './redis-connection.js';
import { type EncryptionKey, TokenCipher } from './token-cipher.js';
import { decodeTokens, encodeTokens } from './token-codec.js';

/** Options of `new RedisTokenStore(...)`. */
export interface RedisTokenStoreOptions {
  /**
   * A connected ioredis client (`new Redis(url)`, or `new Cluster(nodes)`) or node-redis client
   * (`await createClient({ url }).connect()`, or `createCluster(...)`), v4, v5 or v6. Neither package is imported by
   * the SDK; pass the client you already have.
   * With node-redis, listen to its `error` event, or a lost connection crashes the process (node-redis's rule).
   */
  redis: RedisClientLike;
  /**
   * The Redis key holding this user's tokens, e.g. `postsched:tokens:user_42`. The lock lives at `${key}:lock`.
   * On Redis Cluster put a hash tag in it (`postsched:tokens:{user_42}`) so both keys share a slot: with a cluster
   * client a key without one is refused at construction, and a `CROSSSLOT` answer is a `CrossSlotError`.
   */
  key: string;
  /**
   * Expiry of the lock, in ms: how long a holder that died (SIGKILL, crash, lost network) blocks the others.
   * A live holder extends its lock every `lockTtlMs / 3`, so a slow token refresh keeps it; one whose event
   * loop stalls past this loses it, and its `set()` then fails with `LockLostError`. Default 10 000.
   */
  lockTtlMs?: number;
  /**
   * How long `lock()` waits for another holder before failing with `LockTimeoutError`, in ms. Keep it above
   * the longest token refresh (OAuthClient's `timeoutMs`, 30 s by default) and above `lockTtlMs`, so a waiter
   * outlasts both a slow holder and a dead one's lock. Default 45 000.
   */
  lockWaitMs?: number;
  /**
   * Time bound of each Redis command, in ms: when Redis is down or slow, the store fails with
   * `TokenStoreUnavailableError` after this long instead of waiting for the client's reconnects. Default 3 000.
   */
  commandTimeoutMs?: number;
  /**
   * Encrypts the stored tokens with AES-256-GCM: 32 raw bytes (`Uint8Array`/`Buffer`) or their base64 text
   * (`openssl rand -base64 32`). Recommended: a refresh token is a password, and Redis contents end up in
   * backups and replicas. A value stored with another key (or in clear) then fails to read with
   * `StoredTokensUnreadableError`.
   * To rotate the key, a keyring: `{ current: 'k2', keys: { k1, k2 } }` reads values written with any listed key
   * (and those written with one key, before) and writes with `current`; `rotateTokenEncryption` rewrites the rest.
   */
  encryptionKey?: EncryptionKey;
}

const OPTIONS = /* @__PURE__ */ optionNames<RedisTokenStoreOptions>({ redis: 0, key: 0, lockTtlMs: 0, lockWaitMs: 0, commandTimeoutMs: 0, encryptionKey: 0 });

/** A lock this async call chain holds; `outer`: one it held already (another store's, nested). */
interface LockHold {
  readonly store: RedisTokenStore;
  readonly owner: string;
  released: boolean;
  readonly outer: LockHold | undefined;
}

// Which locks this async call chain holds: set() inside lock() must prove it is still the owner. One for every store,
// and disabled whenever no lock is held, so that neither the number of stores nor an idle one costs anything.
const held = new AsyncLocalStorage<LockHold>();
let holdsRunning = 0;

/** The value last read or written under a store's key (`null`: none), so a compare-and-set needs no read first. */
interface Seen {
  readonly raw: string | null;
  readonly tokens: TokenSet | undefined;
}

const DEFAULT_LOCK_TTL_MS = 10_000;
const DEFAULT_LOCK_WAIT_MS = 45_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 3_000;
const FIRST_RETRY_MS = 10;
const MAX_RETRY_MS = 200;
/**
 * How long this process's holders keep the lock, a moving average (50 ms before the first): a waiter that watches
 * the tokens first looks after that long, then after twice as long, and so on up to 1 s between looks. Most waiters
 * so read the holder's result at their first or second look.
 */
let typicalHoldMs = 50;
const MAX_LOOK_MS = 1_000;

/**
 * A `TokenStore` in Redis, for backends that run many processes: `lock()` is a Redis lock (`SET NX PX` with
 * an owner token, released by compare-and-delete), so when a token expires one process refreshes and the
 * others read its result. Inside `lock()`, `set()` writes only while the lock is still this holder's.
 *
 * @example
 * import { Redis } from 'ioredis'
 * import { RedisTokenStore } from '@postsched/sdk/redis'
 *
 * const store = new RedisTokenStore({
 *   redis: new Redis(process.env.REDIS_URL!),
 *   key: `postsched:tokens:{${userId}}`, // braces: the Cluster hash tag, and no user id can reach another's `:lock` key
 *   encryptionKey: process.env.TOKEN_ENCRYPTION_KEY!, // openssl rand -base64 32
 * })
 */
export class RedisTokenStore implements TokenStore {
  readonly #key: string;
  readonly #lockKey: string;
  readonly #connection: RedisConnection;
  readonly #cipher: TokenCipher | undefined;
  readonly #lockTtlMs: number;
  readonly #lockWaitMs: number;
  #seen: Seen | undefined;

  constructor(options: RedisTokenStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new ValidationError('new RedisTokenStore() needs an options object: { redis, key }.', []);
    }
    options = checkOptions(options, OPTIONS, 'new RedisTokenStore()');
    const { key } = options;
    if (typeof key !== 'string' || key.length === 0) {
      throw new ValidationError('`key` must be a non-empty string naming the Redis key of this user\'s tokens.', ['key']);
    }
    this.#key = key;
    this.#lockKey = `${key}:lock`;
    this.#lockTtlMs = integerOption(options.lockTtlMs, 'lockTtlMs', DEFAULT_LOCK_TTL_MS, 1, MAX_TIMEOUT_MS);
    this.#lockWaitMs = integerOption(options.lockWaitMs, 'lockWaitMs', DEFAULT_LOCK_WAIT_MS, 0, MAX_TIMEOUT_MS);
    const commandTimeoutMs = integerOption(options.commandTimeoutMs, 'commandTimeoutMs', DEFAULT_COMMAND_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
    this.#connection = new RedisConnection(options.redis, key, commandTimeoutMs);
    if (this.#connection.isCluster && !hasHashTag(key)) {
      throw new ValidationError(
        `\`key\` "${key}" has no hash tag, so on Redis Cluster it and its lock key "${key}:lock" land in different ` +
          `slots and the lock cannot guard the tokens. Put the user's id in braces: "${withHashTag(key)}".`,
        ['key'],
      );
    }
    this.#cipher = options.encryptionKey === undefined ? undefined : new TokenCipher(options.encryptionKey);
  }

  /** The Redis key of the tokens. */
  get key(): string {
    return this.#key;
  }

  /** A copy of the stored tokens (as `MemoryTokenStore` gives), or `undefined` when none are stored. */
  async get(): Promise<TokenSet | undefined> {
    const { tokens } = await this.#decode(await this.#connection.command('get', ['GET', this.#key]));
    return tokens && copy(tokens);
  }

  /** Decodes a value read under the key, and remembers it (decoding again only when it changed). */
  async #decode(reply: unknown): Promise<Seen> {
    const raw = reply === null || reply === undefined ? null : String(reply);
    const seen = this.#seen;
    if (seen !== undefined && seen.raw === raw) return seen;
    const fresh: Seen = { raw, tokens: raw === null ? undefined : await decodeTokens(raw, this.#key, this.#cipher) };
    this.#seen = fresh;
    return fresh;
  }

  /**
   * Stores the tokens.
   * - With `expectedRefreshToken` (what `TokenManager` passes after a refresh): a compare-and-set. The write
   *   happens only if the stored tokens still hold that refresh token, are these very tokens, or are gone (Redis
   *   lost its data: these are then the newest tokens there are); else nothing is written and it returns `false`.
   *   Read, decision and write are made atomic by a Lua script comparing the stored value byte for byte, so no
   *   late or repeated write can move the key backwards, whether or not the lock is still held.
   * - Without it, inside `lock()`: written only if the lock is still this holder's, else `LockLostError`.
   * - Otherwise a plain write (a new sign-in replaces what is stored).
   */
  async set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<boolean> {
    const value = await encodeTokens(tokens, this.#key, this.#cipher);
    const expected = options?.expectedRefreshToken;
    if (expected !== undefined) return this.#compareAndSet(tokens, expected, value);
    const hold = this.#hold();
    if (hold === undefined) {
      await this.#connection.command('set', ['SET', this.#key, value]);
    } else {
      const written = await this.#connection.script('set', SET_IF_LOCK_OWNER, [this.#lockKey, this.#key], [hold.owner, value]);
      if (written !== 1) throw new LockLostError(this.#key);
    }
    this.#seen = { raw: value, tokens: copy(tokens) };
    return true;
  }

  async #compareAndSet(tokens: TokenSet, expected: string, value: string): Promise<boolean> {
    // Decided from the value this store last read (what the manager just read, in the usual case), so the write costs
    // one script and no read; a change since then makes the script refuse: read again and decide again.
    let seen = this.#seen;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (seen === undefined || attempt > 0) seen = await this.#decode(await this.#connection.command('get', ['GET', this.#key]));
      const absent = seen.raw === null;
      if (!absent && !acceptsWrite(seen.tokens, tokens, { expectedRefreshToken: expected })) return false;
      const written = await this.#connection.script('set', SET_IF_UNCHANGED, [this.#key], [seen.raw ?? '', value, absent ? '1' : '0']);
      if (written === 1) {
        this.#seen = { raw: value, tokens: copy(tokens) };
        return true;
      }
    }
    return false;
  }

  /**
   * Runs `fn` while holding this key's lock across every process sharing the Redis. Waits for another holder
   * up to `lockWaitMs`, then fails with `LockTimeoutError`. The lock is extended while `fn` runs and released
   * when it settles (also when it throws); a nested `lock()` in the same call chain runs `fn` at once instead
   * of waiting for itself.
   * With `options.whileWaiting` (what TokenManager passes), a waiter reads the tokens as it waits instead of
   * retrying the lock (one `MGET` of the tokens and the lock per look, spaced from how long this process's holders
   * keep the lock: about as long at first, twice as long each time after) and ends the wait
   * with what `whileWaiting` returns for them; it retries the lock only once the holder released it.
   *
   * @example
   * await store.lock(async () => {
   *   const current = await store.get()
   *   if (current && current.expiresAt > Date.now() + 60_000) return current
   *   const fresh = await refresh(current)
   *   await store.set(fresh) // LockLostError if the lock expired meanwhile
   *   return fresh
   * })
   */
  async lock<T>(fn: () => Promise<T>, options?: TokenStoreLockOptions<T>): Promise<T> {
    const current = this.#hold();
    if (current !== undefined) return fn();
    const owner = ownerToken();
    const waited = await this.#acquire(owner, options?.whileWaiting);
    if (waited !== undefined) return waited.result;
    const hold: LockHold = { store: this, owner, released: false, outer: held.getStore() };
    const stopExtending = this.#keepExtended(hold);
    const acquiredAt = performance.now();
    holdsRunning++;
    try {
      return await held.run(hold, fn);
    } finally {
      typicalHoldMs = Math.min(MAX_LOOK_MS, Math.max(5, typicalHoldMs + (performance.now() - acquiredAt - typicalHoldMs) / 5));
      hold.released = true;
      stopExtending();
      // No lock held anywhere: turn the async context tracking off again (run() turns it on).
      if (--holdsRunning === 0 && typeof held.disable === 'function') held.disable();
      await this.#release(owner);
    }
  }

  /** The lock of this store that the calling async chain holds, if any. */
  #hold(): LockHold | undefined {
    for (let hold = held.getStore(); hold !== undefined; hold = hold.outer) {
      if (hold.store === this) return hold.released ? undefined : hold;
    }
    return undefined;
  }

  /**
   * Extends the lock every `lockTtlMs / 3` while the holder runs (one extension in flight at most). Stops once
   * the lock is no longer ours; failures are left to the TTL, and to `set()`'s own ownership check.
   */
  #keepExtended(hold: LockHold): () => void {
    let inFlight = false;
    const timer = setInterval(() => {
      if (inFlight || hold.released) return;
      inFlight = true;
      this.#connection
        .script('lock', EXTEND_LOCK, [this.#lockKey], [hold.owner, String(this.#lockTtlMs)])
        .then((extended) => {
          if (extended !== 1) clearInterval(timer);
        })
        .catch(() => {})
        .finally(() => (inFlight = false));
    }, Math.max(1, Math.floor(this.#lockTtlMs / 3)));
    return () => clearInterval(timer);
  }

  /**
   * `SET lock owner NX PX ttl` until it succeeds, with capped exponential backoff and jitter; with `whileWaiting`,
   * looks at the tokens and the lock between tries instead, and tries again only once the lock is free. Resolves
   * `undefined` once the lock is ours, or `{ result }` when `whileWaiting` ended the wait.
   */
  async #acquire<T>(owner: string, whileWaiting: ((stored: TokenSet | undefined) => T | undefined) | undefined): Promise<{ result: T } | undefined> {
    const deadline = performance.now() + this.#lockWaitMs;
    for (let attempt = 0; ; attempt++) {
      if (await this.#tryLock(owner)) return undefined;
      for (let look = 0; ; look++) {
        const left = deadline - performance.now();
        if (left <= 0) throw new LockTimeoutError(this.#key, this.#lockWaitMs);
        const backoff =
          whileWaiting === undefined
            ? Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** attempt) * (0.5 + Math.random() / 2)
            : Math.min(MAX_LOOK_MS, typicalHoldMs * 2 ** look);
        await sleep(Math.min(left, backoff));
        if (whileWaiting === undefined) break;
        const [raw, lock] = (await this.#connection.command('lock', ['MGET', this.#key, this.#lockKey])) as [unknown, unknown];
        const { tokens } = await this.#decode(raw);
        const result = whileWaiting(tokens);
        if (result !== undefined) return { result };
        if (lock === null || lock === undefined) break;
      }
    }
  }

  async #tryLock(owner: string): Promise<boolean> {
    try {
      return (await this.#connection.command('lock', ['SET', this.#lockKey, owner, 'PX', String(this.#lockTtlMs), 'NX'])) === 'OK';
    } catch (error) {
      // The SET may have landed before the time-out: free it now rather than block others for a whole TTL.
      void this.#release(owner);
      throw error;
    }
  }

  /**
   * Compare-and-delete. Failures are swallowed: the caller's result (or error) matters more, and a lock
   * that could not be released expires after `lockTtlMs`.
   */
  async #release(owner: string): Promise<void> {
    try {
      await this.#connection.script('unlock', RELEASE_LOCK, [this.#lockKey], [owner]);
    } catch {
      // expires by TTL
    }
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `RedisTokenStore { key: ${JSON.stringify(this.#key)}, encrypted: ${this.#cipher !== undefined}, lockTtlMs: ${this.#lockTtlMs} }`;
  }

  /** What `JSON.stringify` shows: the key and whether values are encrypted, never a token or the encryption key. */
  toJSON(): {
    /** The Redis key holding this user's tokens. */
    key: string;
    /** Whether the stored value is encrypted. */
    encrypted: boolean;
  } {
    return { key: this.#key, encrypted: this.#cipher !== undefined };
  }
}

/** Redis Cluster's rule: a non-empty `{…}` (the first `{` and the first `}` after it) is what is hashed. */
function hasHashTag(key: string): boolean {
  const open = key.indexOf('{');
  return open !== -1 && key.indexOf('}', open + 1) > open + 1;
}

/** 128 random bits: a holder proves ownership with it, so it must not be guessable by another process. */
function ownerToken(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * `RedisTokenStore`: one user's tokens in Redis, shared by every process of a backend, with a lock so the
 * whole fleet refreshes once. Node-only: the lock (src/store/lease-lock.ts, shared with `PostgresTokenStore`) tracks
 * its holder with `AsyncLocalStorage`. The encryption is Web Crypto.
 */
import { constructorOptions, integerOption, MAX_TIMEOUT_MS, optionNames, refusal } from '../core/invalid-option.js';
import { checkWellFormedId } from '../core/well-formed-id.js';
import type { ReauthorizationReason } from '../oauth/errors.js';
import type { ReconnectMark, StoredGrant, TokenSet, TokenStore, TokenStoreLockOptions, TokenStoreSetOptions } from '../oauth/types.js';
import { type Lease, lockTimes } from '../store/lease-lock.js';
import { toHex } from '../core/bytes.js';
import { SharedTokenStoreError } from '../store/errors.js';
import { StoredTokens, type StoreWrites } from '../store/stored-tokens.js';
import { EXTEND_LOCK, MARK_IF_UNCHANGED, RELEASE_LOCK, REMOVE_TOKENS, SET_IF_LOCK_OWNER, SET_IF_UNCHANGED, TAKE_LOCK, WRITE_TOKENS } from './lock-scripts.js';
import { RedisConnection, redisUnavailable, withHashTag, type RedisClientLike } from './redis-connection.js';
import { type EncryptionKey, storeCipher } from '../store/token-cipher.js';

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
   * The Redis key holding this user's tokens, e.g. `postsched:tokens:user_42`. The lock lives at `${key}:lock`, the
   * mark of a dead grant (`getGrant`) at `${key}:reconnect`.
   * On Redis Cluster put a hash tag in it (`postsched:tokens:{user_42}`) so both keys share a slot: with a cluster
   * client a key without one is refused at construction, and a `CROSSSLOT` answer is a `SharedTokenStoreError` with
   * `code: 'cross_slot'`.
   */
  key: string;
  /**
   * Expiry of the lock, in ms: how long a holder that stops running (killed, or frozen: SIGSTOP, a GC pause) blocks
   * the others. A live holder extends its lock every `lockTtlMs / 3`, so a slow token refresh keeps it. The trade-off
   * (docs/tokens.md, "A holder killed or frozen mid-refresh"): short, a killed holder's user is refreshed again inside
   * a service's overlap window; long (above the token request's time-out, twice, + `storeTimeoutMs`), a holder frozen
   * mid-refresh keeps the lock, which matters under strict rotation. Default 3 000.
   */
  lockTtlMs?: number;
  /**
   * How long `lock()` waits for another holder before failing (`code: 'lock_timeout'`), in ms. Keep it above
   * the longest token refresh (OAuthClient's `timeoutMs`, 30 s by default) and above `lockTtlMs`, so a waiter
   * outlasts both a slow holder and a dead one's lock. Default 45 000.
   */
  lockWaitMs?: number;
  /**
   * Time bound of each Redis command, in ms: when Redis is down or slow, the store fails with
   * `code: 'timeout'` after this long instead of waiting for the client's reconnects. Default 3 000.
   */
  commandTimeoutMs?: number;
  /**
   * Required. Encrypts the stored tokens with AES-256-GCM: 32 raw bytes (`Uint8Array`/`Buffer`) or their base64 text
   * (`openssl rand -base64 32`): a refresh token is a password, and Redis contents end up in backups and replicas.
   * `undefined` (an unset environment variable) is refused at construction; to keep tokens in clear, say so:
   * `'none'`. A value stored with another key (or in clear) then fails to read (`code: 'unreadable'`).
   * To rotate the key, a keyring: `{ current: 'k2', keys: { k1, k2 } }` reads values written with any listed key
   * (and those written with one key, before) and writes with `current`; `rotateTokenEncryption` rewrites the rest.
   * To move from `'none'` to a key, a keyring with `allowPlaintext: true` for the move (see `EncryptionKeyring`).
   */
  encryptionKey: EncryptionKey | 'none' | undefined;
}

const OPTIONS = /* @__PURE__ */ optionNames<RedisTokenStoreOptions>({ redis: 0, key: 0, lockTtlMs: 0, lockWaitMs: 0, commandTimeoutMs: 0, encryptionKey: 0 });

const DEFAULT_COMMAND_TIMEOUT_MS = 3_000;

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
  readonly #encrypted: boolean;
  readonly #lockTtlMs: number;
  readonly #values: StoredTokens;

  constructor(options: RedisTokenStoreOptions) {
    options = constructorOptions(options, OPTIONS, 'new RedisTokenStore()', '{ redis, key, encryptionKey }');
    const { key } = options;
    if (typeof key !== 'string' || key.length === 0) {
      throw refusal('`key` must be a non-empty string naming the Redis key of this user\'s tokens.', ['key']);
    }
    checkWellFormedId(key, 'key');
    this.#key = key;
    this.#lockKey = `${key}:lock`;
    const { ttlMs, waitMs: lockWaitMs } = lockTimes(options);
    this.#lockTtlMs = ttlMs;
    const commandTimeoutMs = integerOption(options.commandTimeoutMs, 'commandTimeoutMs', DEFAULT_COMMAND_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
    this.#connection = new RedisConnection(options.redis, key, commandTimeoutMs);
    if (this.#connection.isCluster && !hasHashTag(key)) {
      throw refusal(
        `\`key\` "${key}" has no hash tag, so on Redis Cluster it and its lock key "${key}:lock" land in different ` +
          `slots and the lock cannot guard the tokens. Put the user's id in braces: "${withHashTag(key)}".`,
        ['key'],
      );
    }
    const cipher = storeCipher(options.encryptionKey);
    this.#encrypted = cipher !== undefined;
    this.#values = new StoredTokens({ store: 'redis', key, operation: 'get' }, cipher, new RedisCommands(this.#connection, key, this.#lockKey, `${key}:reconnect`), { ttlMs, waitMs: lockWaitMs });
  }

  /** The Redis key of the tokens. */
  get key(): string {
    return this.#key;
  }

  /** A copy of the stored tokens (as `MemoryTokenStore` gives), or `undefined` when none are stored. */
  get(): Promise<TokenSet | undefined> {
    return this.#values.get();
  }

  /**
   * Stores the tokens.
   * - With `expectedRefreshToken` (what `TokenManager` passes after a refresh): a compare-and-set. The write
   *   happens only if the stored tokens still hold that refresh token, are these very tokens, or are gone (Redis
   *   lost its data: these are then the newest tokens there are); else nothing is written and it returns `false`.
   *   Read, decision and write are made atomic by a Lua script comparing the stored value byte for byte, so no
   *   late or repeated write can move the key backwards, whether or not the lock is still held.
   * - Without it, inside `lock()`: written only if the lock is still this holder's, else `code: 'lock_lost'`.
   * - Otherwise a plain write (a new sign-in replaces what is stored).
   */
  set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<boolean> {
    return this.#values.set(tokens, options);
  }

  /** Deletes the tokens (`users.disconnect`), leaving `${key}:reconnect` (`no_tokens`): no process writes them back. */
  delete(): Promise<void> {
    return this.#values.delete();
  }

  /** The tokens and the mark of a dead grant (`${key}:reconnect`: `{ reason, since }`) in one `MGET`; no `refreshedAt`. */
  getGrant(): Promise<StoredGrant> {
    return this.#values.getGrant();
  }

  /**
   * Sets `${key}:reconnect` (a script) while the key holds `refused` and no mark of it stands: `true` when this call set
   * it. The mark names the value (its SHA-1): a later write of tokens makes it stale at no cost, `connect` deletes it.
   */
  markReauthorizationRequired(reason: ReauthorizationReason, refused: TokenSet): Promise<boolean> {
    return this.#values.mark(reason, refused);
  }

  /**
   * Runs `fn` while holding this key's lock across every process sharing the Redis. Waits for another holder
   * up to `lockWaitMs`, then fails (`code: 'lock_timeout'`). The lock is extended while `fn` runs and released
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
   *   await store.set(fresh) // code 'lock_lost' if the lock expired meanwhile
   *   return fresh
   * })
   */
  lock<T>(fn: () => Promise<T>, options?: TokenStoreLockOptions<T>): Promise<T> {
    return this.#values.lock(fn, options);
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `RedisTokenStore { key: ${JSON.stringify(this.#key)}, encrypted: ${this.#encrypted}, lockTtlMs: ${this.#lockTtlMs} }`;
  }

  /** What `JSON.stringify` shows: the key and whether values are encrypted, never a token or the encryption key. */
  toJSON(): {
    /** The Redis key holding this user's tokens. */
    key: string;
    /** Whether the stored value is encrypted. */
    encrypted: boolean;
  } {
    return { key: this.#key, encrypted: this.#encrypted };
  }
}

/**
 * How long `${key}:lock:holder` (the owner of the last lease, deleted by its release) outlives a lease that was never
 * released: a taker within this learns that the lease before its own expired unreleased (`Lease.take`).
 */
const HOLDER_NOTE_TTL_MS = 86_400_000;

/**
 * The store's own commands: the lock's lease (`${key}:lock` holds its owner's token, with a Redis expiry;
 * `${key}:lock:holder` notes it) and the writes of the tokens' value.
 */
class RedisCommands implements Lease, StoreWrites {
  readonly #connection: RedisConnection;
  readonly #key: string;
  readonly #lockKey: string;
  readonly #markKey: string;

  constructor(connection: RedisConnection, key: string, lockKey: string, markKey: string) {
    this.#connection = connection;
    this.#key = key;
    this.#lockKey = lockKey;
    this.#markKey = markKey;
  }

  read(): Promise<unknown> {
    return this.#connection.command('get', ['GET', this.#key]);
  }

  /** The value and its mark: one that names another value (written since) is stale, no mark. */
  async readGrant(): Promise<{ value: unknown; reconnect: ReconnectMark | undefined }> {
    const [value, stored] = (await this.#connection.command('get', ['MGET', this.#key, this.#markKey])) as [unknown, unknown];
    const mark = parseMark(stored);
    const of = value === null || value === undefined ? '' : mark && (await fingerprint(String(value)));
    return { value, reconnect: mark !== undefined && mark.of === of ? { reason: mark.reason, since: mark.since } : undefined };
  }

  async writeIfUnchanged(current: string | null, value: string): Promise<boolean> {
    return (await this.#connection.script('set', SET_IF_UNCHANGED, [this.#key, this.#markKey], [current ?? '', value, current === null ? '1' : '0'])) === 1;
  }

  async write(value: string): Promise<void> {
    await this.#connection.script('set', WRITE_TOKENS, [this.#key, this.#markKey], [value]);
  }

  async writeIfOwner(value: string, owner: string): Promise<boolean> {
    return (await this.#connection.script('set', SET_IF_LOCK_OWNER, [this.#lockKey, this.#key], [owner, value])) === 1;
  }

  async markIfUnchanged(current: string, mark: ReconnectMark): Promise<boolean> {
    const of = await fingerprint(current);
    return (await this.#connection.script('set', MARK_IF_UNCHANGED, [this.#key, this.#markKey], [current, JSON.stringify({ ...mark, of }), `"of":"${of}"`])) === 1;
  }

  async remove(mark: ReconnectMark): Promise<void> {
    await this.#connection.script('set', REMOVE_TOKENS, [this.#key, this.#markKey], [JSON.stringify({ ...mark, of: '' })]);
  }

  lockLost(): Error {
    return new SharedTokenStoreError(
      { store: 'redis', key: this.#key, operation: 'set' },
      'lock_lost',
      `The token lock of "${this.#key}" expired before set() ran, so the tokens were not written (another process ` +
        'may hold newer ones). Raise `lockTtlMs` above the longest token refresh.',
    );
  }

  timedOut(waitMs: number): Error {
    return redisUnavailable(this.#key, 'lock', {
      code: 'lock_timeout',
      timeoutMs: waitMs,
      message:
        `another process held the token lock for more than ${waitMs} ms (\`lockWaitMs\`). ` +
        'If a holder died, its lock expires after `lockTtlMs`; keep `lockWaitMs` longer than `lockTtlMs`',
    });
  }

  async take(owner: string, ttlMs: number): Promise<boolean | 'expired'> {
    const taken = await this.#connection.script('lock', TAKE_LOCK, [this.#lockKey, `${this.#lockKey}:holder`], [owner, String(ttlMs), String(HOLDER_NOTE_TTL_MS)]);
    return taken === 2 ? 'expired' : taken === 1;
  }

  async extend(owner: string, ttlMs: number): Promise<boolean> {
    return (await this.#connection.script('lock', EXTEND_LOCK, [this.#lockKey], [owner, String(ttlMs)])) === 1;
  }

  async release(owner: string): Promise<boolean> {
    return (await this.#connection.script('unlock', RELEASE_LOCK, [this.#lockKey, `${this.#lockKey}:holder`], [owner])) === 1;
  }

  async look(): Promise<{ stored: unknown; held: boolean }> {
    const [stored, lock] = (await this.#connection.command('lock', ['MGET', this.#key, this.#lockKey])) as [unknown, unknown];
    return { stored, held: lock !== null && lock !== undefined };
  }
}

/** The mark as stored (JSON `{ reason, since, of }`); anything else (a foreign value) is no mark. */
export function parseMark(stored: unknown): (ReconnectMark & { of: string }) | undefined {
  if (stored === null || stored === undefined) return undefined;
  try {
    const { reason, since, of } = JSON.parse(String(stored)) as Partial<ReconnectMark & { of: string }>;
    return typeof reason === 'string' && typeof since === 'number' && typeof of === 'string' ? { reason, since, of } : undefined;
  } catch {
    return undefined;
  }
}

/** Which value a mark is about: the SHA-1 of the stored value, in hex (a digest: no token can be read from it). */
async function fingerprint(value: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-1', new TextEncoder().encode(value))));
}

/** Redis Cluster's rule: a non-empty `{…}` (the first `{` and the first `}` after it) is what is hashed. */
function hasHashTag(key: string): boolean {
  const open = key.indexOf('{');
  return open !== -1 && key.indexOf('}', open + 1) > open + 1;
}

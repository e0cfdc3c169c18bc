/**
 * `PostgresTokenStore`: one user's tokens in a row of a PostgreSQL table, shared by every process of a backend, with
 * a lock (a lease on the row: owner token and expiry) so the whole fleet refreshes once. Node-only, as the lock
 * (src/store/lease-lock.ts, shared with `RedisTokenStore`) tracks its holder with `AsyncLocalStorage`.
 */
import { constructorOptions, integerOption, MAX_TIMEOUT_MS, optionNames, refusal } from '../core/invalid-option.js';
import { checkWellFormedId } from '../core/well-formed-id.js';
import type { ReauthorizationReason } from '../oauth/errors.js';
import type { ReconnectMark, StoredGrant, TokenSet, TokenStore, TokenStoreLockOptions, TokenStoreSetOptions } from '../oauth/types.js';
import { type EncryptionKey, storeCipher } from '../store/token-cipher.js';
import { type Lease, lockTimes } from '../store/lease-lock.js';
import { StoredTokens, type StoreWrites } from '../store/stored-tokens.js';
import { checkPool, PgConnection, type PgPoolLike, postgresFailure } from './pg-connection.js';
import { statements, tableName } from './token-table.js';

/** Options of `new PostgresTokenStore(...)`. */
export interface PostgresTokenStoreOptions {
  /**
   * A node-postgres `Pool` (`new Pool({ connectionString })`): the SDK never imports `pg`, pass the pool you have.
   * Listen to its `error` event (`pool.on('error', …)`), or an idle connection that the server ends (a restart)
   * crashes the process (node-postgres's rule). postgres.js is not supported (a `ValidationError` says so).
   */
  pool: PgPoolLike;
  /** The row of this user's tokens: your user's id, e.g. `user_42` (any non-empty text, at most 512 characters). */
  key: string;
  /** The table made by `createTokenTable` (or your migration of `tokenTableSql()`). Default `postsched_tokens`. */
  table?: string;
  /**
   * Required. Encrypts the stored tokens with AES-256-GCM, bound to the row's key (a value copied to another row fails
   * to read): 32 raw bytes (`Uint8Array`/`Buffer`) or their base64 text (`openssl rand -base64 32`): a refresh token
   * is a password, and database contents end up in backups and replicas. `undefined` (an unset environment variable)
   * is refused at construction; to keep tokens in clear, say so: `'none'`. A keyring rotates the key, and with
   * `allowPlaintext: true` moves a table from `'none'` to a key (see `EncryptionKeyring`).
   */
  encryptionKey: EncryptionKey | 'none' | undefined;
  /**
   * Expiry of the row's lock, in ms: how long a holder that stops running (killed, or frozen) blocks the others. A
   * live holder extends it every `lockTtlMs / 3`. Short, a killed holder's user is refreshed again inside a service's
   * overlap window; long, a frozen one keeps the lock (see `RedisTokenStoreOptions.lockTtlMs`). Default 3 000.
   */
  lockTtlMs?: number;
  /** How long `lock()` waits for another holder before failing (`code: 'lock_timeout'`), in ms. Default 45 000. */
  lockWaitMs?: number;
  /**
   * Time bound of each statement, the wait for a free connection of the pool included, in ms: past it the store fails
   * with `code: 'timeout'`. Default 3 000.
   */
  statementTimeoutMs?: number;
}

const OPTIONS = /* @__PURE__ */ optionNames<PostgresTokenStoreOptions>({
  pool: 0, key: 0, table: 0, encryptionKey: 0, lockTtlMs: 0, lockWaitMs: 0, statementTimeoutMs: 0,
});

export const DEFAULT_STATEMENT_TIMEOUT_MS = 3_000;
const MAX_KEY_LENGTH = 512;

/**
 * A `TokenStore` in a PostgreSQL table, for backends that run many processes (and keep their users' credentials in
 * their database): one row per user; `lock()` is a lease on the row taken, extended and freed by single statements
 * (never a transaction held open), so when a token expires one process refreshes and the others read its result.
 *
 * @example
 * import { Pool } from 'pg'
 * import { PostgresTokenStore, createTokenTable } from '@postsched/sdk/postgres'
 *
 * const pool = new Pool({ connectionString: process.env.DATABASE_URL })
 * await createTokenTable(pool)
 * const store = new PostgresTokenStore({ pool, key: userId, encryptionKey: process.env.TOKEN_ENCRYPTION_KEY })
 */
export class PostgresTokenStore implements TokenStore {
  readonly #key: string;
  readonly #table: string;
  readonly #sql: ReturnType<typeof statements>;
  readonly #connection: PgConnection;
  readonly #encrypted: boolean;
  readonly #lockTtlMs: number;
  readonly #values: StoredTokens;
  readonly #statements: PgStatements;

  constructor(options: PostgresTokenStoreOptions) {
    options = constructorOptions(options, OPTIONS, 'new PostgresTokenStore()', '{ pool, key, encryptionKey }');
    const { key } = options;
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw refusal(`\`key\` must be a non-empty string (at most ${MAX_KEY_LENGTH} characters) naming this user's row.`, ['key']);
    }
    checkWellFormedId(key, 'key');
    if (key.includes('\0')) throw refusal(`\`key\` holds a NUL character (at index ${key.indexOf('\0')}), which PostgreSQL text cannot store: pass an id without one.`, ['key']);
    const pool = checkPool(options.pool);
    const table = tableName(options.table);
    this.#key = key;
    this.#table = table.name;
    this.#sql = statements(table.quoted);
    const { ttlMs, waitMs: lockWaitMs } = lockTimes(options);
    this.#lockTtlMs = ttlMs;
    const timeoutMs = integerOption(options.statementTimeoutMs, 'statementTimeoutMs', DEFAULT_STATEMENT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
    this.#connection = new PgConnection(pool, { key, table: table.name }, timeoutMs);
    const cipher = storeCipher(options.encryptionKey);
    this.#encrypted = cipher !== undefined;
    this.#statements = new PgStatements(this.#connection, this.#sql, { key, table: table.name });
    this.#values = new StoredTokens({ store: 'postgres', key, table: table.name, operation: 'get' }, cipher, this.#statements, { ttlMs, waitMs: lockWaitMs });
  }

  /** The row's key. */
  get key(): string {
    return this.#key;
  }

  /** A copy of the stored tokens, or `undefined` when none are stored. One statement. */
  get(): Promise<TokenSet | undefined> {
    return this.#values.get();
  }

  /**
   * Stores the tokens (and sets `refreshed_at`, clears the needs-reconnect columns).
   * - With `expectedRefreshToken` (what `TokenManager` passes after a refresh): a compare-and-set, one statement
   *   (`INSERT … ON CONFLICT DO UPDATE … WHERE tokens IS NOT DISTINCT FROM` the value read): written only if the row
   *   still holds that refresh token, these very tokens, or none; else nothing is written and it returns `false`.
   * - Without it, inside `lock()`: written only while the lock is still this holder's, else `code: 'lock_lost'`.
   * - Otherwise a plain write (a new sign-in replaces what is stored).
   */
  set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<boolean> {
    return this.#values.set(tokens, options);
  }

  /**
   * Runs `fn` while holding the row's lock across every process sharing the table: waits for another holder up to
   * `lockWaitMs`; extends the lock while `fn` runs and frees it when `fn` settles. No connection is held meanwhile:
   * taking, extending and freeing the lease are one statement each. With `options.whileWaiting` (what TokenManager
   * passes), a waiter reads the row as it waits and ends the wait with the holder's tokens (see `RedisTokenStore.lock`).
   */
  lock<T>(fn: () => Promise<T>, options?: TokenStoreLockOptions<T>): Promise<T> {
    return this.#values.lock(fn, options);
  }

  /**
   * The stored tokens, the mark of a dead grant (`needs_reconnect_reason`, `needs_reconnect_since`) and `refreshed_at`,
   * in one statement.
   */
  getGrant(): Promise<StoredGrant> {
    return this.#values.getGrant();
  }

  /**
   * Called by `TokenManager` when the service refused the stored refresh token: sets `needs_reconnect_reason` and
   * `needs_reconnect_since` only while the row still holds `refused` and no mark (one statement); `true` when this call
   * set them. The next write of tokens (`connect`) clears them.
   */
  markReauthorizationRequired(reason: ReauthorizationReason, refused: TokenSet): Promise<boolean> {
    return this.#values.mark(reason, refused);
  }

  /**
   * Deletes the tokens (`users.disconnect`): `tokens` and `refreshed_at` set to NULL, the mark `no_tokens` left, so a
   * manager of another process never writes its copy back; the next `set` without `expectedRefreshToken` clears it.
   */
  delete(): Promise<void> {
    return this.#values.delete();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `PostgresTokenStore { table: ${JSON.stringify(this.#table)}, key: ${JSON.stringify(this.#key)}, encrypted: ${this.#encrypted}, lockTtlMs: ${this.#lockTtlMs} }`;
  }

  /** What `JSON.stringify` shows: the table, the key and whether values are encrypted; never a token or a key. */
  toJSON(): {
    /** The table. */
    table: string;
    /** The row's key. */
    key: string;
    /** Whether the stored value is encrypted. */
    encrypted: boolean;
  } {
    return { table: this.#table, key: this.#key, encrypted: this.#encrypted };
  }
}

/** The store's own statements: the row's lease (`lock_owner` and `lock_expires_at`) and the writes of its tokens. */
class PgStatements implements Lease, StoreWrites {
  readonly #connection: PgConnection;
  readonly #sql: ReturnType<typeof statements>;
  readonly #key: string;
  readonly #table: string;

  constructor(connection: PgConnection, sql: ReturnType<typeof statements>, row: { key: string; table: string }) {
    this.#connection = connection;
    this.#sql = sql;
    this.#key = row.key;
    this.#table = row.table;
  }

  async read(): Promise<unknown> {
    const [row] = await this.#connection.rows('get', this.#sql.get, [this.#key]);
    return row?.['tokens'];
  }

  async readGrant(): Promise<{ value: unknown; reconnect: ReconnectMark | undefined; refreshedAt: number | undefined }> {
    const [row] = await this.#connection.rows('get', this.#sql.getGrant, [this.#key]);
    const reason = row?.['reason'];
    const refreshedAt = row?.['refreshed_at'];
    return {
      value: row?.['tokens'],
      reconnect: typeof reason === 'string' ? ({ reason, since: Number(row?.['since']) } as ReconnectMark) : undefined,
      refreshedAt: refreshedAt === null || refreshedAt === undefined ? undefined : Number(refreshedAt),
    };
  }

  async markIfUnchanged(current: string, mark: ReconnectMark): Promise<boolean> {
    return (await this.#connection.count('set', this.#sql.markReconnect, [this.#key, mark.reason, current])) === 1;
  }

  async remove(): Promise<void> {
    await this.#connection.count('set', this.#sql.remove, [this.#key]);
  }

  async writeIfUnchanged(current: string | null, value: string): Promise<boolean> {
    return (await this.#connection.count('set', this.#sql.setIfUnchanged, [this.#key, value, current])) === 1;
  }

  async write(value: string): Promise<void> {
    await this.#connection.count('set', this.#sql.set, [this.#key, value]);
  }

  async writeIfOwner(value: string, owner: string): Promise<boolean> {
    return (await this.#connection.count('set', this.#sql.setIfLockOwner, [this.#key, value, owner])) === 1;
  }

  lockLost(): Error {
    return postgresFailure(
      { key: this.#key, table: this.#table, operation: 'set' },
      'lock_lost',
      "the row's lock expired before set() ran, so the tokens were not written (another process may hold newer ones). Raise `lockTtlMs` above the longest token refresh.",
    );
  }

  timedOut(waitMs: number): Error {
    return postgresFailure(
      { key: this.#key, table: this.#table, operation: 'lock' },
      'lock_timeout',
      `another process held the row's lock for more than ${waitMs} ms (\`lockWaitMs\`); a holder that died frees it after \`lockTtlMs\`.`,
      { timeoutMs: waitMs },
    );
  }

  async take(owner: string, ttlMs: number): Promise<boolean | 'expired'> {
    const [row] = await this.#connection.rows('lock', this.#sql.take, [this.#key, owner, ttlMs]);
    return row === undefined ? false : row['expired'] === true ? 'expired' : true;
  }

  async extend(owner: string, ttlMs: number): Promise<boolean> {
    return (await this.#connection.count('lock', this.#sql.extend, [this.#key, owner, ttlMs])) === 1;
  }

  async release(owner: string): Promise<boolean> {
    return (await this.#connection.count('unlock', this.#sql.release, [this.#key, owner])) === 1;
  }

  async look(): Promise<{ stored: unknown; held: boolean }> {
    const [row] = await this.#connection.rows('lock', this.#sql.look, [this.#key]);
    return { stored: row?.['tokens'], held: row?.['held'] === true };
  }
}

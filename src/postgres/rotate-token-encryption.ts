/**
 * `rotateTokenEncryption` for PostgreSQL: the last step of a key rotation. Pages through the token table by key
 * (keyset pagination, one autocommit statement per page: no transaction, no pool connection held across pages) and
 * re-encrypts every value still under an older key of the keyring (src/redis/token-rotation.ts, shared with Redis),
 * each written back by a compare-and-set `UPDATE … WHERE key = $1 AND tokens = <the value read>`.
 */
import { checkOptions, integerOption, invalidOption, MAX_TIMEOUT_MS, optionNames } from '../core/invalid-option.js';
import type { EncryptionKey } from '../store/token-cipher.js';
import { checkRotation, noRotation, rotateStoredValue, rotationCipher, type TokenRotationResult } from '../store/token-rotation.js';
import { checkPool, PgConnection, type PgPoolLike } from './pg-connection.js';
import { statements, tableName } from './token-table.js';

/** Options of `rotateTokenEncryption(...)` for PostgreSQL. */
export interface RotateTokenEncryptionOptions {
  /** A node-postgres `Pool`, as given to `PostgresTokenStore`. */
  pool: PgPoolLike;
  /** The stores' table. Default `postsched_tokens`. */
  table?: string;
  /**
   * The keyring the stores use now, `current` being the new key: `{ current: 'k2', keys: { k1, k2 } }`. Moving from
   * `encryptionKey: 'none'`: `{ current: 'k1', keys: { k1 }, allowPlaintext: true }` encrypts the values in clear.
   */
  encryptionKey: EncryptionKey;
  /**
   * Count only: how many values are under older keys (`underOldKeys`) or unreadable; nothing is written. Fails with a
   * `ValidationError` when any value is unreadable (the keyring is missing a key): dry-run with the keyring that
   * still holds the older keys, never with the one you plan to deploy after.
   */
  dryRun?: boolean;
  /** Time bound of each statement, the wait for a free connection of the pool included, in ms. Default 3 000. */
  statementTimeoutMs?: number;
}

const OPTIONS = optionNames<RotateTokenEncryptionOptions>({ pool: 0, table: 0, encryptionKey: 0, dryRun: 0, statementTimeoutMs: 0 });

/** Rows per page: each page is one short statement. */
const PAGE_SIZE = 200;

/**
 * Re-encrypts every stored token value still under an older key of the keyring (or in clear, with the keyring's
 * `allowPlaintext`) under its `current` key, so that the older keys can be removed; with `dryRun`, counts them. Safe while the app runs: each value is written back by a
 * compare-and-set, so one a refresh wrote meanwhile is kept; the row's other columns (lock, refreshed_at) are left
 * alone. Rows without tokens (a lock only) are skipped. Failures are
 * `SharedTokenStoreError`s (the row's key, never a value); never logs, never returns a token or a key.
 *
 * @example
 * const keyring = { current: 'k2', keys: { k1: process.env.TOKEN_KEY_1!, k2: process.env.TOKEN_KEY_2! } }
 * const { underOldKeys, unreadable } = await rotateTokenEncryption({ pool, table: 'postsched_tokens', encryptionKey: keyring })
 * // underOldKeys === 0 && unreadable === 0: deploy { current: 'k2', keys: { k2 } }
 */
export async function rotateTokenEncryption(options: RotateTokenEncryptionOptions): Promise<TokenRotationResult> {
  const { pool, table, encryptionKey, dryRun = false, statementTimeoutMs } = checkOptions(options, OPTIONS, 'rotateTokenEncryption()');
  const checkedPool = checkPool(pool);
  const name = tableName(table);
  if (typeof dryRun !== 'boolean') invalidOption('dryRun', 'must be true or false.');
  const timeoutMs = integerOption(statementTimeoutMs, 'statementTimeoutMs', 3_000, 1, MAX_TIMEOUT_MS);
  const cipher = rotationCipher(encryptionKey);
  const sql = statements(name.quoted);
  const connection = (key: string) => new PgConnection(checkedPool, { key, table: name.name }, timeoutMs);

  const counts = noRotation();
  let after = '';
  for (;;) {
    const page = await connection('*').rows('get', sql.page, [after, PAGE_SIZE]);
    for (const row of page) {
      const key = String(row['key']);
      const rowConnection = connection(key);
      await rotateStoredValue(
        cipher,
        key,
        {
          read: async () => {
            const value = (await rowConnection.rows('get', sql.get, [key]))[0]?.['tokens'];
            return typeof value === 'string' ? value : null;
          },
          swap: async (from, to) => (await rowConnection.count('set', sql.reencrypt, [key, to, from])) === 1,
        },
        dryRun,
        counts,
      );
      after = key;
    }
    if (page.length < PAGE_SIZE) return checkRotation(counts, cipher, dryRun);
  }
}

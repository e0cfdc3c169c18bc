/**
 * `rotateTokenEncryption` for Redis: the last step of a key rotation. SCANs the keys matching a pattern and
 * re-encrypts every token value still under an older key of the keyring (token-rotation.ts), each by the store's own
 * compare-and-set script.
 */
import { checkOptions, integerOption, invalidOption, MAX_TIMEOUT_MS, optionNames } from '../core/invalid-option.js';
import { SET_IF_UNCHANGED } from './lock-scripts.js';
import { RedisConnection, type RedisClientLike } from './redis-connection.js';
import type { EncryptionKey } from '../store/token-cipher.js';
import { checkRotation, noRotation, rotateStoredValue, rotationCipher, type TokenRotationResult } from '../store/token-rotation.js';

/** Options of `rotateTokenEncryption(...)` for Redis. */
export interface RotateTokenEncryptionOptions {
  /**
   * A connected ioredis or node-redis client of one Redis server. On Redis Cluster, call once per master
   * (ioredis: `for (const node of cluster.nodes('master'))`): SCAN sees one node's keys.
   */
  redis: RedisClientLike;
  /** The SCAN `MATCH` pattern of the stores' keys, e.g. `postsched:tokens:*`. Values that are not tokens (lock keys) are skipped. */
  match: string;
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
  /** Time bound of each Redis command, in ms. Default 3 000. */
  commandTimeoutMs?: number;
}

const OPTIONS = optionNames<RotateTokenEncryptionOptions>({ redis: 0, match: 0, encryptionKey: 0, dryRun: 0, commandTimeoutMs: 0 });

/**
 * Re-encrypts every stored token value still under an older key of the keyring (or in clear, with the keyring's
 * `allowPlaintext`) under its `current` key, so that the older keys can be removed; with `dryRun`, counts them. Safe while the app runs: each value is written back by a
 * compare-and-set, so one a refresh wrote meanwhile is kept. Resolves to the counts; `underOldKeys: 0` means no value
 * needs the older keys any more. Never logs, never returns a token or a key.
 *
 * @example
 * const keyring = { current: 'k2', keys: { k1: process.env.TOKEN_KEY_1!, k2: process.env.TOKEN_KEY_2! } }
 * const { underOldKeys, unreadable } = await rotateTokenEncryption({ redis, match: 'postsched:tokens:*', encryptionKey: keyring })
 * // underOldKeys === 0 && unreadable === 0: deploy { current: 'k2', keys: { k2 } }
 */
export async function rotateTokenEncryption(options: RotateTokenEncryptionOptions): Promise<TokenRotationResult> {
  const { redis, match, encryptionKey, dryRun = false, commandTimeoutMs } = checkOptions(options, OPTIONS, 'rotateTokenEncryption()');
  if (typeof match !== 'string' || match.length === 0) invalidOption('match', "must be the SCAN pattern of the stores' keys, e.g. 'postsched:tokens:*'.");
  if (typeof dryRun !== 'boolean') invalidOption('dryRun', 'must be true or false.');
  const timeoutMs = integerOption(commandTimeoutMs, 'commandTimeoutMs', 3_000, 1, MAX_TIMEOUT_MS);
  const cipher = rotationCipher(encryptionKey);
  const connection = new RedisConnection(redis, match, timeoutMs);
  if (connection.isCluster) invalidOption('redis', "must be one Redis server: on a cluster, call once per master (ioredis: cluster.nodes('master')).");

  const counts = noRotation();
  let cursor = '0';
  do {
    const [next, keys] = (await connection.command('get', ['SCAN', cursor, 'MATCH', match, 'COUNT', '200', 'TYPE', 'string'])) as [string, string[]];
    for (const key of keys) {
      await rotateStoredValue(
        cipher,
        key,
        {
          read: async () => (await connection.command('get', ['GET', key])) as string | null,
          swap: async (from, to) => (await connection.script('set', SET_IF_UNCHANGED, [key], [from, to, '0'])) === 1,
        },
        dryRun,
        counts,
      );
    }
    cursor = String(next);
  } while (cursor !== '0');
  return checkRotation(counts, cipher, dryRun);
}

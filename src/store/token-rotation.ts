/**
 * Finishing a key rotation, for every store that encrypts through `TokenCipher`: each stored value still under
 * another key than the keyring's `current` (or in clear, while the keyring says `allowPlaintext`) is opened and
 * sealed again under `current`, written back by a compare-and-set, so a value a refresh wrote meanwhile is never
 * replaced. The store gives the values one at a time (a read and a compare-and-set of its own); the plaintext never
 * leaves this function, and nothing is logged.
 */
import { invalidOption } from '../core/invalid-option.js';
import { UnreadableValue } from './errors.js';
import { isEnvelope, NO_ENCRYPTION, TokenCipher } from './token-cipher.js';
import { isPlaintextTokens } from './token-codec.js';

/** What a rotation run counted (`rotateTokenEncryption`). */
export interface TokenRotationResult {
  /** Token values looked at: encrypted ones and token sets in clear (other values, such as lock keys, are left alone and not counted). */
  scanned: number;
  /** Values this run encrypted under `current` (from an older key, or from clear). */
  rewritten: number;
  /**
   * Values under another key than `current` (or in clear, with the keyring's `allowPlaintext`) when the run ended:
   * with `dryRun`, every one it found; else those it could not rewrite (changed by writers three times in a row).
   * 0, with `unreadable` 0: no value needs the older keys (nor `allowPlaintext`).
   */
  underOldKeys: number;
  /**
   * Values the stores cannot read with this keyring, left as they are: written with a key it does not list, damaged,
   * or in clear while the keyring does not say `allowPlaintext`. Anything but 0: the keyring is missing a key (a dry
   * run then fails); remove no key from it.
   */
  unreadable: number;
  /** Of `scanned`, the values found in clear (counted in `rewritten` / `underOldKeys`, or without `allowPlaintext` in `unreadable`). */
  plaintext: number;
}

/** A result with every count at 0. */
export function noRotation(): TokenRotationResult {
  return { scanned: 0, rewritten: 0, underOldKeys: 0, unreadable: 0, plaintext: 0 };
}

/** The cipher of a rotation's `encryptionKey`: a keyring (or one key) whose `current` is a key, never `'none'`. */
export function rotationCipher(encryptionKey: unknown): TokenCipher {
  if (encryptionKey === undefined || encryptionKey === NO_ENCRYPTION) invalidOption('encryptionKey', "must be the stores' keyring: { current: 'k2', keys: { k1, k2 } }.");
  const cipher = new TokenCipher(encryptionKey);
  if (cipher.writesPlaintext) {
    invalidOption('encryptionKey.current', "is 'none': a rotation encrypts under `current`, so run it with a keyring whose `current` is a key (the next step of the move).", ['encryptionKey', 'current']);
  }
  return cipher;
}

/**
 * Re-encrypts the value stored under `storeKey` (`read` gives it, `null` when there is none) under the current key,
 * writing it with `swap(from, to)`, a compare-and-set that writes `to` only while `from` is stored. When a writer
 * changed the value meanwhile, reads it again (it is usually under `current` by then). Counts into `counts`.
 */
export async function rotateStoredValue(
  cipher: TokenCipher,
  storeKey: string,
  store: { read(): Promise<string | null>; swap(from: string, to: string): Promise<boolean> },
  dryRun: boolean,
  counts: TokenRotationResult,
): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const stored = await store.read();
    if (stored === null) return;
    const clear = isPlaintextTokens(stored);
    if (!clear && !isEnvelope(stored)) return;
    if (attempt === 0) {
      counts.scanned++;
      if (clear) counts.plaintext++;
    }
    if (!clear && cipher.isCurrent(stored)) return;
    let plaintext = stored;
    try {
      if (clear && !cipher.allowsPlaintext) throw new UnreadableValue('not_encrypted');
      if (!clear) plaintext = await cipher.open(stored, storeKey);
    } catch (error) {
      if (!(error instanceof UnreadableValue)) throw error;
      counts.unreadable++;
      return;
    }
    if (dryRun) break;
    if (await store.swap(stored, await cipher.seal(plaintext, storeKey))) {
      counts.rewritten++;
      return;
    }
  }
  counts.underOldKeys++;
}

/**
 * The end of a run: a dry run that found values no key of the keyring opens fails, so that nobody removes a key on
 * its word (a keyring without the old key would count every value under it as unreadable, and none as "old").
 */
export function checkRotation(counts: TokenRotationResult, cipher: TokenCipher, dryRun: boolean): TokenRotationResult {
  const problem = unreadableProblem(counts, cipher.allowsPlaintext);
  if (dryRun && problem !== undefined) invalidOption('encryptionKey', problem);
  return counts;
}

/** What is wrong when some values cannot be read with the keyring (`undefined`: nothing), and how to fix it. */
export function unreadableProblem({ scanned, unreadable, plaintext }: TokenRotationResult, allowsPlaintext: boolean): string | undefined {
  if (unreadable === 0) return undefined;
  return (
    `is missing a key: ${unreadable} of ${scanned} stored values cannot be read with this keyring (written with a key it ` +
    `does not list, or damaged${plaintext > 0 && !allowsPlaintext ? ', or in clear while the keyring does not say `allowPlaintext: true`' : ''}). ` +
    'Run again with a keyring that still holds the older keys, and remove no key until no value is unreadable.'
  );
}

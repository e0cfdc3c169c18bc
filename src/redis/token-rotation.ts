/**
 * Finishing a key rotation, for every store that encrypts through `TokenCipher`: each stored value still under
 * another key than the keyring's `current` is opened and sealed again under `current`, written back by a
 * compare-and-set, so a value a refresh wrote meanwhile is never replaced. The store gives the values one at a time
 * (a read and a compare-and-set of its own); the plaintext never leaves this function, and nothing is logged.
 */
import { StoredTokensUnreadableError } from './errors.js';
import { isEnvelope, type TokenCipher } from './token-cipher.js';

/** What a rotation run counted (`rotateTokenEncryption`). */
export interface TokenRotationResult {
  /** Encrypted values looked at (values that are not encrypted, such as lock keys, are left alone and not counted). */
  scanned: number;
  /** Values this run re-encrypted under `current`. */
  rewritten: number;
  /**
   * Values under another key than `current` when the run ended: with `dryRun`, every one it found; else those it
   * could not rewrite (changed by writers three times in a row). 0 after a run: no value needs the older keys.
   */
  underOldKeys: number;
  /** Values no key of the keyring opens (written with a key it does not list, or damaged): left as they are. */
  unreadable: number;
}

/** A result with every count at 0. */
export function noRotation(): TokenRotationResult {
  return { scanned: 0, rewritten: 0, underOldKeys: 0, unreadable: 0 };
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
    if (stored === null || !isEnvelope(stored)) return;
    if (attempt === 0) counts.scanned++;
    if (cipher.isCurrent(stored)) return;
    let plaintext: string;
    try {
      plaintext = await cipher.open(stored, storeKey);
    } catch (error) {
      if (!(error instanceof StoredTokensUnreadableError)) throw error;
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

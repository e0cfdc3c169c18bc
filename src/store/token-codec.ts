/**
 * How a TokenSet is written to and read from one Redis string: JSON, sealed by `TokenCipher` when the store
 * has an encryption key (the PostgreSQL store writes the same string). Both ways check the shape with the token
 * manager's own schema (`TokenSetSchema`), so a foreign or corrupted value is an error, not a token set with
 * `undefined` fields.
 */
import { refusal } from '../core/invalid-option.js';
import { TokenSetSchema, tokenSetProblem } from '../oauth/token-set.js';
import type { TokenSet } from '../oauth/types.js';
import { UnreadableValue } from './errors.js';
import { isEnvelope, type TokenCipher } from './token-cipher.js';

/** Turns tokens into the stored string. Rejects a value that is not a TokenSet before anything is written. */
export async function encodeTokens(tokens: TokenSet, redisKey: string, cipher: TokenCipher | undefined): Promise<string> {
  const issue = TokenSetSchema.safeParse(tokens).error?.issues[0];
  // The message names the field and its type, never the value (a token).
  if (issue !== undefined) {
    const field = issue.path[0];
    throw refusal(`set() needs a TokenSet: the value ${issue.message}.`, typeof field === 'string' ? ['tokens', field] : ['tokens']);
  }
  // Every field is kept, those it does not know too: a newer SDK's fields survive a round trip through an older process.
  const json = JSON.stringify(tokens);
  return cipher === undefined ? json : cipher.seal(json, redisKey);
}

/** Whether a stored string is a token set in clear (written with `encryptionKey: 'none'`), not an envelope or a lock's value. */
export function isPlaintextTokens(stored: string): boolean {
  if (isEnvelope(stored)) return false;
  try {
    return tokenSetProblem(JSON.parse(stored)) === undefined;
  } catch {
    return false;
  }
}

/** Turns the stored string back into tokens; every problem is an `UnreadableValue`. */
export async function decodeTokens(stored: unknown, redisKey: string, cipher: TokenCipher | undefined): Promise<TokenSet> {
  if (typeof stored !== 'string') throw new UnreadableValue('malformed', `a ${typeof stored}, not a string`);
  let json: string;
  if (isEnvelope(stored)) {
    if (cipher === undefined) throw new UnreadableValue('missing_key');
    json = await cipher.open(stored, redisKey);
  } else {
    // Refusing clear text when a key is set stops a writer with access to the store from planting tokens; the
    // keyring's `allowPlaintext` lets it through only while the app moves its values from `'none'` to a key.
    if (cipher !== undefined && !cipher.allowsPlaintext) throw new UnreadableValue('not_encrypted');
    json = stored;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new UnreadableValue('malformed', 'not JSON');
  }
  const problem = tokenSetProblem(parsed);
  if (problem !== undefined) throw new UnreadableValue('malformed', `it ${problem}`);
  return parsed as TokenSet;
}

/**
 * How a TokenSet is written to and read from one Redis string: JSON, sealed by `TokenCipher` when the store
 * has an encryption key. Reading checks the shape, so a foreign or corrupted value is an error, not a
 * token set with `undefined` fields.
 */
import * as z from 'zod/mini';
import { ValidationError } from '../errors.js';
import type { TokenSet } from '../oauth/types.js';
import { StoredTokensUnreadableError } from './errors.js';
import { isEnvelope, type TokenCipher } from './token-cipher.js';

// Loose: fields a newer SDK adds to TokenSet survive a round trip through an older process.
const tokenSetSchema = z.looseObject({
  accessToken: z.string(),
  refreshToken: z.optional(z.string()),
  expiresAt: z.number(),
  scopes: z.array(z.string()),
  tokenType: z.literal('bearer'),
});

/** Turns tokens into the stored string. Rejects a value that is not a TokenSet before anything is written. */
export async function encodeTokens(tokens: TokenSet, redisKey: string, cipher: TokenCipher | undefined): Promise<string> {
  const checked = z.safeParse(tokenSetSchema, tokens);
  if (!checked.success) {
    const path = checked.error.issues[0]?.path.map((part) => (typeof part === 'symbol' ? String(part) : part)) ?? [];
    // zod/mini issues name the path and expected type, never the received value (a token).
    throw new ValidationError(`set() needs a TokenSet: "${path.join('.')}" is missing or has the wrong type.`, ['tokens', ...path]);
  }
  const json = JSON.stringify(tokens);
  return cipher === undefined ? json : cipher.seal(json, redisKey);
}

/** Turns the stored string back into tokens; every problem is a `StoredTokensUnreadableError`. */
export async function decodeTokens(stored: unknown, redisKey: string, cipher: TokenCipher | undefined): Promise<TokenSet> {
  if (typeof stored !== 'string') throw new StoredTokensUnreadableError(redisKey, 'malformed', `a ${typeof stored}, not a string`);
  let json: string;
  if (isEnvelope(stored)) {
    if (cipher === undefined) throw new StoredTokensUnreadableError(redisKey, 'missing_key');
    json = await cipher.open(stored, redisKey);
  } else {
    // Refusing clear text when a key is set stops a writer with Redis access from planting tokens.
    if (cipher !== undefined) throw new StoredTokensUnreadableError(redisKey, 'not_encrypted');
    json = stored;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new StoredTokensUnreadableError(redisKey, 'malformed', 'not JSON');
  }
  const checked = z.safeParse(tokenSetSchema, parsed);
  if (!checked.success) {
    const path = checked.error.issues[0]?.path.map(String).join('.') ?? '';
    throw new StoredTokensUnreadableError(redisKey, 'malformed', `"${path}" is missing or has the wrong type`);
  }
  return parsed as TokenSet;
}

/**
 * The TokenSet as a value: its one shape check, copy, comparison, inspect text and compare-and-set rule, used by the
 * token manager and by every token store (MemoryTokenStore, RedisTokenStore's codec, …).
 *
 * The check is written out rather than a zod schema: it runs in the main entry (every `setTokens` and every store
 * read), where zod/mini would add about 5.5 KB gz for six fields, and a second, schema-made check of the same shape
 * in the stores could disagree with it.
 */
import type { TokenSet, TokenStoreSetOptions } from './types.js';

/**
 * What is wrong with `value` as a TokenSet, or `undefined`: a phrase starting with `is` or `has` that names the field
 * and never quotes a value ("has no accessToken string (got a number)"). Enough of a check that a wrong object fails
 * where it enters (setTokens, a store's get, a stored value), not at the first API call. Unknown fields are kept.
 */
export function tokenSetProblem(value: unknown): string | undefined {
  const t = value as Partial<Record<keyof TokenSet, unknown>> | null;
  if (typeof t === 'string') return 'is a string, not a TokenSet object (parse it with JSON.parse first)';
  if (typeof t !== 'object' || t === null) return `is ${t === null ? 'null' : `a ${typeof t}`}, not a TokenSet object`;
  if (typeof t.accessToken !== 'string' || t.accessToken === '') return `has no accessToken string (got ${kind(t.accessToken)})`;
  if (t.refreshToken !== undefined && typeof t.refreshToken !== 'string') return `has a refreshToken that is not a string (got ${kind(t.refreshToken)})`;
  // Inside Date's range, so every date computed from it (and util.inspect) works.
  if (typeof t.expiresAt !== 'number' || !isDateTime(t.expiresAt)) return 'has no numeric expiresAt (epoch ms)';
  if (!Array.isArray(t.scopes) || !t.scopes.every((s) => typeof s === 'string')) return 'has no scopes array of strings';
  if (t.tokenType !== 'bearer') return "has a tokenType other than 'bearer'";
  return undefined;
}

/**
 * `value` as a TokenSet, or a `TypeError` "`source` returned a value that has no accessToken string (got a number)"
 * (`source`: where the value came from, e.g. `get()`); the value is never echoed.
 */
export function parseTokenSet(value: unknown, source: string): TokenSet {
  const problem = tokenSetProblem(value);
  if (problem !== undefined) throw new TypeError(`${source} ${problem.replace(/^(is|has)/, 'returned a value that $1')}`);
  return value as TokenSet;
}

/**
 * Copies so that a caller mutating the object it got (or gave) cannot change the tokens held (every store).
 * `userId`: the copy is stamped with that user (the manager of a `UserClients` user writes only stamped tokens).
 */
export function copyTokenSet(tokens: TokenSet, userId?: string): TokenSet {
  const copy = { ...tokens, scopes: [...tokens.scopes] };
  if (userId !== undefined) copy.userId = userId;
  return copy;
}

/** Whether `a` and `b` are the same tokens: the same access and refresh token. */
export function sameTokens(a: TokenSet, b: TokenSet): boolean {
  return a.accessToken === b.accessToken && a.refreshToken === b.refreshToken;
}

/** Whether `tokens` are stamped with a user other than `userId` (tokens without a stamp, stored before it, are not). */
export function isOtherUsers(tokens: TokenSet, userId: string | undefined): boolean {
  return userId !== undefined && tokens.userId !== undefined && tokens.userId !== userId;
}

/**
 * The compare-and-set rule of `TokenStoreSetOptions.expectedRefreshToken`, for stores that hold the decoded
 * TokenSet: write when nothing is stored, when the stored refresh token is the expected one, or when the stored
 * tokens are the very ones being written (a repeated write).
 */
export function acceptsWrite(stored: TokenSet | undefined, tokens: TokenSet, options: TokenStoreSetOptions | undefined): boolean {
  const expected = options?.expectedRefreshToken;
  if (expected === undefined || stored === undefined) return true;
  return stored.refreshToken === expected || sameTokens(stored, tokens);
}

/** "expiresAt: 2025-01-01T00:00:00.000Z, scopes: posts:read": safe facts about a TokenSet, for inspect output. */
export function describeTokens(tokens: TokenSet | undefined): string {
  if (tokens === undefined) return 'hasTokens: false';
  // Outside Date's range toISOString would throw inside util.inspect.
  if (!isDateTime(tokens.expiresAt)) return 'hasTokens: true';
  return `hasTokens: true, expiresAt: ${new Date(tokens.expiresAt).toISOString()}, scopes: '${tokens.scopes.join(' ')}'`;
}

/** Finite and inside Date's range (±8.64e15 ms). */
function isDateTime(ms: number): boolean {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15;
}

function kind(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/**
 * The TokenSet as a value: its one shape check (a zod/mini schema), copy, comparison, inspect text and
 * compare-and-set rule, used by the token manager and by every token store (MemoryTokenStore, the Redis and
 * PostgreSQL stores' stored JSON, …).
 */
import * as z from 'zod/mini';
import type { TokenSet, TokenStoreSetOptions } from './types.js';

/** Each issue's message is a phrase starting with `is` or `has` that names the field and never quotes a value. */
const got = (phrase: string) => ({ error: (issue: { input?: unknown }) => `${phrase} (got ${kind(issue.input)})` });

/**
 * A TokenSet, as `setTokens` takes it and the stores keep it (JSON in Redis and PostgreSQL): a non-empty
 * `accessToken`, an optional `refreshToken`, `expiresAt` in epoch ms inside Date's range (so every date computed
 * from it, and util.inspect, works), string `scopes` and `tokenType: 'bearer'`. Unknown fields are kept.
 */
export const TokenSetSchema = /* @__PURE__ */ z.looseObject(
  {
    accessToken: /* @__PURE__ */ z.custom<string>((token) => typeof token === 'string' && token !== '', /* @__PURE__ */ got('has no accessToken string')),
    refreshToken: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string(/* @__PURE__ */ got('has a refreshToken that is not a string'))),
    expiresAt: /* @__PURE__ */ z.custom<number>((ms) => typeof ms === 'number' && isDateTime(ms), 'has no numeric expiresAt (epoch ms)'),
    scopes: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string('has no scopes array of strings'), 'has no scopes array of strings'),
    // z.custom, not z.literal: the one literal of the main entry and the stores would bring zod's literal type (0.1 KB gz).
    tokenType: /* @__PURE__ */ z.custom<'bearer'>((type) => type === 'bearer', "has a tokenType other than 'bearer'"),
  },
  {
    error: (issue) =>
      typeof issue.input === 'string' ? 'is a string, not a TokenSet object (parse it with JSON.parse first)' : `is ${kind(issue.input)}, not a TokenSet object`,
  },
);

/**
 * What is wrong with `value` as a TokenSet, or `undefined`: the first issue of `TokenSetSchema` ("has no accessToken
 * string (got a number)"). Enough of a check that a wrong object fails where it enters (setTokens, a store's get, a
 * stored value), not at the first API call.
 */
export function tokenSetProblem(value: unknown): string | undefined {
  return TokenSetSchema.safeParse(value).error?.issues[0]?.message;
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

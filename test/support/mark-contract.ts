/**
 * What every built-in store does with the mark of a dead grant (`ReconnectMark`), checked through two store objects
 * over the same stored tokens (two processes): the mark's compare-and-set, its clearing by every write of tokens, and
 * `delete` (no tokens, a `no_tokens` mark that refuses a compare-and-set over nothing until a plain write).
 */
import { expect } from 'vitest';
import type { TokenSet, TokenStore } from '@postsched/sdk';

type MarkingStore = Required<Pick<TokenStore, 'get' | 'set' | 'getGrant' | 'markReauthorizationRequired' | 'delete' | 'lock'>>;

const tokens = (label: string): TokenSet => ({ accessToken: `at-${label}`, refreshToken: `rt-${label}`, expiresAt: 1_900_000_000_000, scopes: ['posts:read'], tokenType: 'bearer' });

export async function checkMarks(store: MarkingStore, other: MarkingStore): Promise<void> {
  await store.set(tokens('1'));
  expect(await store.getGrant()).toMatchObject({ tokens: tokens('1'), reconnect: undefined });
  // Only while the store holds the refused tokens, and only the first mark: the compare-and-set's winner is told.
  expect(await store.markReauthorizationRequired('invalid_grant', tokens('0'))).toBe(false);
  expect(await store.markReauthorizationRequired('invalid_grant', tokens('1'))).toBe(true);
  expect(await other.markReauthorizationRequired('refresh_outcome_unknown', tokens('1'))).toBe(false);
  const { reconnect } = await other.getGrant();
  expect(reconnect).toEqual({ reason: 'invalid_grant', since: expect.any(Number) });
  expect(Math.abs(reconnect!.since - Date.now())).toBeLessThan(3_600_000);
  // Every write of tokens clears it: a compare-and-set, a write inside the lock, a plain write.
  await other.set(tokens('2'), { expectedRefreshToken: 'rt-1' });
  expect((await store.getGrant()).reconnect).toBeUndefined();
  expect(await other.markReauthorizationRequired('invalid_grant', tokens('2'))).toBe(true);
  await store.lock(async () => void (await store.set(tokens('3'))));
  expect(await other.getGrant()).toMatchObject({ tokens: tokens('3'), reconnect: undefined });
  expect(await store.markReauthorizationRequired('invalid_grant', tokens('3'))).toBe(true);
  await other.set(tokens('4'));
  expect(await store.getGrant()).toMatchObject({ tokens: tokens('4'), reconnect: undefined });
  // Deleted: nothing stored, a `no_tokens` mark; another process's write-back (a compare-and-set over nothing) is
  // refused; a new sign-in (a plain write) lands and clears it.
  await store.delete();
  expect(await other.getGrant()).toMatchObject({ tokens: undefined, reconnect: { reason: 'no_tokens' } });
  expect(await other.set(tokens('4'), { expectedRefreshToken: 'rt-4' })).toBe(false);
  expect(await other.get()).toBeUndefined();
  await other.set(tokens('5'));
  expect(await store.getGrant()).toMatchObject({ tokens: tokens('5'), reconnect: undefined });
}

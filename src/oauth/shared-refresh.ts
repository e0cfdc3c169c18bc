/**
 * What every TokenManager of a process shares about refreshes, so that managers of one user never refresh twice
 * and never send a refresh token the process has seen replaced (Assumptions: rotation and reuse, RFC 9700 §4.14):
 * - one refresh in flight per refresh token: a second manager holding the same refresh token waits for the first's
 *   result instead of sending it again (whatever store each one uses);
 * - a bounded memory of the rotations the process has seen (refresh token → the TokenSet that replaced it), so a
 *   manager whose store holds replaced tokens (a manager made per request from stale tokens, a store that lost an
 *   acknowledged write) takes the newer ones instead of refreshing. The bound never drops a rotation no store has
 *   acknowledged yet (its save failed): the memory is then the only copy of the newest tokens.
 * Kept per `TokenRefresher` (the `oauth` of the managers): managers of one app share one `OAuthClient`, and two
 * services (or two tests) whose tokens happen to be equal never mix.
 */
import type { ReauthorizationReason } from './errors.js';
import { copyTokenSet } from './token-set.js';
import type { TokenRefresher, TokenSet } from './types.js';

/** Rotations remembered per refresher; past it the oldest stored ones are forgotten (about 0.5 KB each). */
export const REMEMBERED_ROTATIONS = 10_000;

interface Shared {
  readonly inFlight: Map<string, Promise<TokenSet>>;
  /** refresh token → the TokenSet that replaced it, oldest first (Map order) for the bound. */
  readonly successors: Map<string, TokenSet>;
  /** Refresh tokens of the successors this process's refreshes obtained that no store holds yet: kept past the bound. */
  readonly unstored: Set<string>;
  /** Refresh tokens the service refused (`invalid_grant`, …), oldest first, with the reason: never sent again. */
  readonly refused: Map<string, ReauthorizationReason>;
}

const byRefresher = new WeakMap<TokenRefresher, Shared>();

function shared(oauth: TokenRefresher): Shared {
  let found = byRefresher.get(oauth);
  if (found === undefined) {
    found = { inFlight: new Map(), successors: new Map(), unstored: new Set(), refused: new Map() };
    byRefresher.set(oauth, found);
  }
  return found;
}

/**
 * The newest TokenSet the process knows to follow `tokens`: `tokens` itself when its refresh token was never seen
 * replaced, else the end of the chain of rotations seen since.
 */
export function newestKnown(oauth: TokenRefresher, tokens: TokenSet): TokenSet {
  const { successors } = shared(oauth);
  let newest = tokens;
  // Bounded walk: a chain longer than the memory would be a cycle, which `recordRotation` never makes.
  for (let step = 0; step < REMEMBERED_ROTATIONS; step++) {
    const next = newest.refreshToken === undefined ? undefined : successors.get(newest.refreshToken);
    if (next === undefined) return newest;
    newest = next;
  }
  return newest;
}

/**
 * Remembers that `next` replaced `previous`: `seen` by this process's refresh, or `observed` in the store (it moved
 * from one to the other while this process waited for another's refresh; kept only when `next` expires later, so a
 * store that went back to older tokens meanwhile cannot teach the process a wrong order). Never a cycle.
 */
export function recordRotation(oauth: TokenRefresher, previous: TokenSet, next: TokenSet, how: 'seen' | 'observed'): void {
  const from = previous.refreshToken;
  if (from === undefined || next.refreshToken === undefined || next.refreshToken === from) return;
  if (how === 'observed' && next.expiresAt <= previous.expiresAt) return;
  if (newestKnown(oauth, next).refreshToken === from) return;
  const { successors, unstored } = shared(oauth);
  successors.delete(from);
  successors.set(from, copyTokenSet(next));
  if (how === 'seen') unstored.add(next.refreshToken);
  if (successors.size <= REMEMBERED_ROTATIONS) return;
  for (const [oldest, successor] of successors) {
    if (unstored.has(successor.refreshToken as string)) continue;
    successors.delete(oldest);
    return;
  }
}

/** A store holds `tokens` (read from it, or written and acknowledged): the rotation to them may be forgotten. */
export function recordStored(oauth: TokenRefresher, tokens: TokenSet): void {
  if (tokens.refreshToken !== undefined) shared(oauth).unstored.delete(tokens.refreshToken);
}

/** The service refused `refreshToken` for `reason`: this process never sends it again (bounded like the rotations). */
export function recordRefused(oauth: TokenRefresher, refreshToken: string, reason: ReauthorizationReason): void {
  const { refused } = shared(oauth);
  refused.set(refreshToken, reason);
  if (refused.size > REMEMBERED_ROTATIONS) refused.delete(refused.keys().next().value as string);
}

/** Why the service refused `refreshToken` earlier in this process, or `undefined` when it never did. */
export function refusedReason(oauth: TokenRefresher, refreshToken: string | undefined): ReauthorizationReason | undefined {
  return refreshToken === undefined ? undefined : shared(oauth).refused.get(refreshToken);
}

/**
 * `oauth.refresh(previous)`, once per refresh token in the process: a refresh of the same refresh token already in
 * flight is shared, and a refresh token already seen replaced is never sent (its successor is returned).
 */
export function refreshOnce(oauth: TokenRefresher, previous: TokenSet): Promise<TokenSet> {
  const refreshToken = previous.refreshToken as string;
  const { inFlight } = shared(oauth);
  const newest = newestKnown(oauth, previous);
  if (newest !== previous) return Promise.resolve(copyTokenSet(newest));
  let flight = inFlight.get(refreshToken);
  if (flight === undefined) {
    flight = oauth.refresh(previous).then((fresh) => {
      recordRotation(oauth, previous, fresh, 'seen');
      return fresh;
    });
    inFlight.set(refreshToken, flight);
    const done = () => inFlight.delete(refreshToken);
    flight.then(done, done);
  }
  return flight;
}

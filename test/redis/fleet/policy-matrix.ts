/**
 * Issue 39: every refresh-token policy × every fault, across a fleet of 4 processes on one store (Redis or
 * PostgreSQL), against the fake service. One fleet per policy and 4 users, one per fault:
 * - user 0, none: every process forces a refresh at once (a 401 everywhere), twice;
 * - user 1, the answer lost after the service committed the rotation (a reset);
 * - user 2, the answer after the client's time-out (the service committed, the client gave up);
 * - user 3, a process killed between the answer and the save (SIGKILL; the others take its lease over).
 * Then every process still alive forces a refresh of every user. Counted: token requests, failures by reason, users
 * logged out, grant revocations. Never time.
 * Where the service keeps accepting a token the SDK holds (static, an overlap window, retain-until-used, the grant's
 * lifetimes), nobody is logged out and no grant revoked. Under strict rotation a lost answer loses the user whatever
 * the client does (the service holds the only valid token): the process that sent the token again (once: the one
 * further token request) marks the grant dead in the store, reporting it as `refresh_outcome_unknown`, once across
 * the fleet; from then on every process fails locally with that reason, and no process sends a token again.
 */
import { expect, it } from 'vitest';
import type { RefreshPolicy } from '@postsched/sdk/testing';
import { type Fleet, type FleetOptions, startFleet } from './fleet-rig.js';

const HOUR = 3_600_000;
/** The managers' margin: longer than the access tokens of the grant's last minutes (`expires_in` cut to 5 min). */
const MARGIN_MS = 10 * 60_000;

interface Cell {
  policy: RefreshPolicy;
  /** Under this policy, a token whose rotation's answer was lost is refused: users 1 to 3 are lost. */
  strict?: boolean;
  /** Before the races, the fake's clock moves to 5 min before the grants end: `expires_in` under the margin. */
  lastMinutes?: boolean;
}

const CELLS: Array<[string, Cell]> = [
  ['static', { policy: { rotation: 'static' } }],
  ['rotate', { policy: { rotation: 'rotate' }, strict: true }],
  ['rotate + reuse detection', { policy: { rotation: 'rotate', reuseDetection: true }, strict: true }],
  ['overlap window', { policy: { rotation: 'rotate', reuseDetection: true, overlapMs: 10_000 } }],
  ['retain-until-used', { policy: { rotation: 'retain-until-used', reuseDetection: true } }],
  ['absolute lifetime (short last expires_in)', { policy: { rotation: 'static', grantLifetimeMs: HOUR }, lastMinutes: true }],
  ['idle lifetime', { policy: { rotation: 'rotate', reuseDetection: true, overlapMs: 10_000, idleLifetimeMs: HOUR } }],
];

const P = CELLS.length;
/** The users of fault `fault` (0 none, 1 lost, 2 late, 3 killed), one per policy: user `fault * P + p` is on fake `p`. */
const ofFault = (fault: number) => CELLS.map((_, p) => fault * P + p);
/** The 4 users of policy `p`. */
const ofPolicy = (p: number) => [0, 1, 2, 3].map((fault) => fault * P + p);
const UNKNOWN = 'ReauthorizationRequiredError:refresh_outcome_unknown';
const STRICT = CELLS.filter(([, cell]) => cell.strict).length;

/**
 * The matrix on the store `target()` gives (a server started by the test file): one fleet, one fake per policy, so that
 * the fleet starts once and the killed holders' leases lapse together.
 */
export function policyMatrix(
  target: () => FleetOptions['redis'],
  track: (fleet: Fleet) => void,
  bounds: { commandTimeoutMs: number; storeTimeoutMs: number },
): void {
  it('every policy × fault', { timeout: 180_000 }, async () => {
    const f = await startFleet({
      redis: target(),
      users: 4 * P,
      refreshPolicy: CELLS.map(([, cell]) => cell.policy),
      refreshMarginMs: MARGIN_MS,
      // Short bounds, so that a killed holder's lease (lockTtlMs) lapses soon and its taker's wait for a pending save
      // (one lease at most) ends soon; the store's are far above what a command takes on a loaded 2-core machine.
      oauthTimeoutMs: 2_000,
      ...bounds,
      lockTtlMs: 1_000,
    });
    track(f);
    const w0 = f.workers[0]!;
    const alive = [1, 2, 3];

    // Every token expired: each process calls once per user, at once. Then (the absolute lifetime's grants in their last
    // 5 minutes: expires_in under the margin) a 401 for every user in every process at once, and calls again: one
    // token request per user per rotation.
    const first = await f.round();
    for (const [p, [, cell]] of CELLS.entries()) if (cell.lastMinutes) await f.fakes[p]!.clock.advance(HOUR - 5 * 60_000);
    const races = [first, await f.round({ force: true }), await f.round()];
    expect(races.map(({ succeeded, failures, refreshesSent }) => ({ succeeded, failures, refreshesSent }))).toEqual([
      { succeeded: 16 * P, failures: {}, refreshesSent: 4 * P },
      { succeeded: 16 * P, failures: {}, refreshesSent: 4 * P },
      { succeeded: 16 * P, failures: {}, refreshesSent: 0 },
    ]);

    // The answer lost after the rotation, then the answer after the client's time-out: process 0 refreshes (a 401).
    for (const fake of f.fakes) fake.faults.reset({ path: '/oauth/token', afterCommit: true });
    const lost = await f.round({ force: true, only: ofFault(1), workers: [0] });
    for (const fake of f.fakes) fake.faults.hang({ path: '/oauth/token', afterCommit: true });
    const late = await f.round({ force: true, only: ofFault(2), workers: [0] });
    // Sent again at once with the same token: accepted, except under strict rotation (marked and reported, once).
    for (const { succeeded, failures, refreshesSent, marked } of [lost, late]) {
      expect({ succeeded, failures, refreshesSent, marked }).toEqual({ succeeded: P - STRICT, failures: { [UNKNOWN]: STRICT }, refreshesSent: 2 * P, marked: STRICT });
    }

    // Process 0 is killed after the answers, before the saves; the others get a 401 and take its leases over.
    w0.send({ type: 'pause-next-refresh', count: P });
    w0.send({ type: 'round', users: ofFault(3), concurrency: P, force: true });
    for (let i = 0; i < P; i++) await w0.next('refreshed');
    await w0.kill();
    const killed = await f.round({ force: true, only: ofFault(3), workers: alive });
    // The taker sends the stored token once: accepted, or under strict rotation refused, marked and reported as unknown;
    // the other processes read the mark and fail with that reason without a token request.
    expect({ succeeded: killed.succeeded, failures: killed.failures, marked: killed.marked }).toEqual({ succeeded: 3 * (P - STRICT), failures: { [UNKNOWN]: 3 * STRICT }, marked: STRICT });
    expect(killed.refreshesSent).toBe(P);

    const grants = f.grants();
    for (const [p, [name, cell]] of CELLS.entries()) {
      const users = ofPolicy(p);
      const after = await f.round({ force: true, only: users, workers: alive });
      const again = await f.round({ force: true, only: users, workers: alive });
      const fake = f.fakes[p]!;
      const requests = users.map((u) => f.grants()[u]!.tokenRequests - grants[u]!.tokenRequests);
      console.log(`${name}:`, JSON.stringify({ after, again, requestsSinceFaults: requests }));
      // One token request per rotation: 2 for users 0 and 3; users 1 and 2's first forced call finds the tokens process
      // 0's resend got (newer than the rejected ones) in the store and uses them.
      // Every dead grant was reported once, by the process that marked it, during the faults: never again.
      expect({ name, marked: after.marked + again.marked }).toEqual({ name, marked: 0 });
      if (!cell.strict) {
        // The service accepts the token the SDK holds: every call succeeds, nobody is logged out, nothing is revoked.
        expect({ name, after: after.failures, again: again.failures, requests }).toEqual({ name, after: {}, again: {}, requests: [2, 1, 1, 2] });
        expect(await f.loggedOut(users)).toBe(0);
        expect(fake.stats.grants).toEqual({ revocations: 0, reuseEvents: 0 });
        continue;
      }
      // Strict rotation: users 1 to 3 (a lost answer, a late one, a killed holder) are lost whatever the client does:
      // the service's only valid token never arrived. User 0 goes on. Each lost user was marked by the one resend of
      // their token (the one further token request): no process sends it again (0 requests since), each fails locally.
      expect({ name, requests, againSent: again.refreshesSent }).toEqual({ name, requests: [2, 0, 0, 0], againSent: 1 });
      expect({ after: after.failures, again: again.failures }).toEqual({ after: { [UNKNOWN]: 9 }, again: { [UNKNOWN]: 9 } });
      expect(after.succeeded + again.succeeded).toBe(6);
      expect(await f.loggedOut(users)).toBe(3);
      // Reuse detection revokes each lost user's grant on the resend of the dead token (the user was lost already).
      expect(fake.stats.grants.revocations).toBe(cell.policy.reuseDetection ? 3 : 0);
    }
  });
}

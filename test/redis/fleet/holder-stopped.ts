/**
 * Issue 39: a holder of a user's lock that stops running mid-refresh, after the service rotated the refresh token and
 * before the answer is saved: killed (SIGKILL), or frozen (SIGSTOP past the heartbeat, then SIGCONT). Under each
 * refresh policy, with the stores' `lockTtlMs` by default (a heartbeat: 3 s) and as long as a refresh's bound (the
 * lease before: the token request's time-out twice, plus `storeTimeoutMs`). The fakes' clocks run in real time, so an
 * overlap window closes 10 s after the rotation, as a service's does. Counted: users logged out, grants revoked.
 *
 * Four processes, 4 users per policy, one per case: process 0 refreshes the users of the killed cases and is killed,
 * process 1 those of the frozen cases and is stopped; process 2 then asks for the users of the default lease, process
 * 3 for those of the long one, and waits. Process 1 runs again once process 2 is done: past the heartbeat, and (by
 * far) inside the long lease.
 */
import { expect, it } from 'vitest';
import type { RefreshPolicy } from '@postsched/sdk/testing';
import { type Fleet, type FleetOptions, startFleet, total } from './fleet-rig.js';

const POLICIES: Array<[string, RefreshPolicy]> = [
  ['static', { rotation: 'static' }],
  ['rotate', { rotation: 'rotate' }],
  ['rotate + reuse detection', { rotation: 'rotate', reuseDetection: true }],
  ['overlap window 10 s', { rotation: 'rotate', reuseDetection: true, overlapMs: 10_000 }],
  ['retain-until-used', { rotation: 'retain-until-used', reuseDetection: true }],
];
const P = POLICIES.length;
const CASES = ['killed, default lease', 'frozen, default lease', 'killed, long lease', 'frozen, long lease'] as const;
/** The users of case `c`, one per policy: user `c * P + p` is on fake `p`. */
const ofCase = (c: number) => POLICIES.map((_, p) => c * P + p);
/** The token request's time-out in the workers: a long lease is 2 × this + storeTimeoutMs. */
const OAUTH_TIMEOUT_MS = 8_000;

/** Per case, per policy: the user logged out, and the user's grant revoked. */
type Outcomes = Record<(typeof CASES)[number], Record<string, { lost: number; revoked: number }>>;

/** Lost users and revoked grants of each case, by policy, once every process has called for every user twice more. */
const EXPECTED: Outcomes = {
  // A killed holder's user is refreshed again a heartbeat later, inside the window: only strict rotation loses it (the
  // service's one valid refresh token died with the process).
  'killed, default lease': outcomes({ rotate: [1, 0], 'rotate + reuse detection': [1, 1] }),
  // A holder frozen past the heartbeat looks dead: its user is refreshed again with the rotated-out token. Under reuse
  // detection that revokes the grant; under plain rotation the refresh is refused (no revocation) and the frozen
  // holder's save, once it runs again, still lands (the store held the token it replaced).
  'frozen, default lease': outcomes({ 'rotate + reuse detection': [1, 1] }),
  // The long lease blocks a killed holder's user past the overlap window: the same user is lost there too.
  'killed, long lease': outcomes({ rotate: [1, 0], 'rotate + reuse detection': [1, 1], 'overlap window 10 s': [1, 1] }),
  'frozen, long lease': outcomes({}),
};

/** The matrix on the store `target()` gives (a server started by the test file). */
export function holderStoppedMatrix(
  target: () => FleetOptions['redis'],
  track: (fleet: Fleet) => void,
  bounds: { commandTimeoutMs: number; storeTimeoutMs: number },
): void {
  it('a holder killed or frozen mid-refresh, under each policy, with the default lockTtlMs and a long one', { timeout: 180_000 }, async () => {
    const longLeaseMs = 2 * OAUTH_TIMEOUT_MS + bounds.storeTimeoutMs;
    const f = await startFleet({
      redis: target(),
      users: CASES.length * P,
      refreshPolicy: POLICIES.map(([, policy]) => policy),
      clock: 'real',
      oauthTimeoutMs: OAUTH_TIMEOUT_MS,
      ...bounds,
      lockTtlMs: CASES.flatMap((name) => POLICIES.map(() => (name.endsWith('long lease') ? longLeaseMs : null))),
    });
    track(f);
    const [killed, frozen] = f.workers;
    expect(await f.round()).toMatchObject({ succeeded: 4 * CASES.length * P, failures: {}, refreshesSent: CASES.length * P });

    // Processes 0 and 1 refresh their users (a 401); the service rotates; process 0 is killed and process 1 stopped
    // before either saves.
    for (const [w, cases] of [[killed!, [0, 2]], [frozen!, [1, 3]]] as const) {
      w.send({ type: 'pause-next-refresh', count: 2 * P });
      w.send({ type: 'round', users: cases.flatMap(ofCase), concurrency: 2 * P, force: true });
    }
    for (let i = 0; i < 2 * P; i++) await Promise.all([killed!.next('refreshed'), frozen!.next('refreshed')]);
    await killed!.kill();
    frozen!.child.kill('SIGSTOP');
    const [short, long] = [2, 3].map((w, i) => {
      f.workers[w]!.send({ type: 'round', users: [...ofCase(2 * i), ...ofCase(2 * i + 1)], concurrency: 2 * P, force: true });
      return f.workers[w]!.next('round-done');
    });
    const rounds = [await short!];
    frozen!.child.kill('SIGCONT');
    frozen!.send({ type: 'continue' });
    rounds.push(await long!, await frozen!.next('round-done'));

    // Every process still alive calls for every user twice (after a 401): what the store holds is what goes on.
    const settle = [await f.round({ force: true, workers: [1, 2, 3] }), await f.round({ force: true, workers: [1, 2, 3] })];
    const grants = f.grants();
    const measured = {} as Outcomes;
    for (const [c, name] of CASES.entries()) {
      measured[name] = {};
      for (const [p, [policy]] of POLICIES.entries()) {
        const user = c * P + p;
        measured[name][policy] = { lost: await f.loggedOut([user]), revoked: Number(grants[user]!.revoked) };
      }
    }
    console.log('A holder killed or frozen mid-refresh:', JSON.stringify({ measured, rounds: total(...rounds), settle }));
    expect(measured).toEqual(EXPECTED);
  });
}

/** Every policy's outcome in a case: `{ lost: 0, revoked: 0 }` but for those listed as `[lost, revoked]`. */
function outcomes(listed: Record<string, [number, number]>): Record<string, { lost: number; revoked: number }> {
  return Object.fromEntries(POLICIES.map(([policy]) => [policy, { lost: listed[policy]?.[0] ?? 0, revoked: listed[policy]?.[1] ?? 0 }]));
}

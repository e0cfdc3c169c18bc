/**
 * Issue 39, dead grants: 4 processes share 8 users through `UserClients` on one store (Redis or PostgreSQL). The
 * service revokes users 0–3's grants; every process then calls the API for every user. Counted, never timed: token
 * requests and API requests for the dead users, `onReauthorizationRequired` and `onReconnected` calls across the
 * processes, each process's `grantStatus`, and what the store holds after a `disconnect`.
 */
import { expect, it } from 'vitest';
import type { GrantStatus } from '@postsched/sdk';
import { type Fleet, type FleetOptions, startFleet } from './fleet-rig.js';
import type { WorkerReport } from './fleet-worker.js';

const DEAD = [0, 1, 2, 3];
const LIVE = [4, 5, 6, 7];
const ALL = [...DEAD, ...LIVE];

/** Token and API requests the fake answered so far. */
function requests(f: Fleet): { token: number; api: number } {
  return { token: f.fake.stats.tokenRequests.refresh_token, api: f.fake.stats.requests['GET /accounts'] ?? 0 };
}

/** Over the processes' reports: per user, the `onReauthorizationRequired` reasons and the `onReconnected` count. */
function told(reports: WorkerReport[], users: number[]) {
  return users.map((user) => ({
    user,
    reasons: reports.flatMap((r) => r.reauthorizationRequired[user] ?? []),
    reconnected: reports.reduce((sum, r) => sum + (r.reconnected[user] ?? 0), 0),
  }));
}

function statuses(reports: WorkerReport[], user: number): GrantStatus[] {
  return reports.map((r) => r.status[user]!);
}

export function deadGrants(target: () => FleetOptions['redis'], track: (fleet: Fleet) => void, refreshedAt: boolean): void {
  it('dead grants cost nothing, are told once across 4 processes; reconnect and disconnect are seen by every process', { timeout: 120_000 }, async () => {
    const f = await startFleet({ redis: target(), users: ALL.length, refreshPolicy: { rotation: 'rotate', reuseDetection: true }, userClients: { revocationEndpoint: '/oauth/revoke' } });
    track(f);
    // Every user's token expired: one refresh each, then every process calls the API for every user.
    expect((await f.round({ api: true })).succeeded).toBe(4 * ALL.length);
    expect(requests(f).token).toBe(ALL.length);

    // The service ends users 0-3's grants (their access tokens too): each process's next call gets a 401.
    for (const user of DEAD) await f.revoke(user);
    const before = requests(f);
    const dying = await f.round({ api: true, only: DEAD });
    expect(dying).toMatchObject({ succeeded: 0, failures: { 'ReauthorizationRequiredError:invalid_grant': 4 * DEAD.length }, marked: 0 });
    // One token request per dead user across the fleet (the process that took the lock): the others read the mark.
    expect(requests(f).token - before.token).toBe(DEAD.length);

    // From the mark on: 0 token requests and 0 API requests for them, from any process, however often they are called.
    const marked = requests(f);
    for (let i = 0; i < 3; i++) {
      const again = await f.round({ api: true, only: DEAD });
      expect(again).toMatchObject({ succeeded: 0, failures: { 'ReauthorizationRequiredError:invalid_grant': 4 * DEAD.length } });
      await f.round({ force: true, only: DEAD });
    }
    expect(requests(f)).toEqual(marked);

    // Told once per dead grant across the 4 processes; nothing for the live users.
    let reports = await f.reports(ALL);
    expect(told(reports, ALL)).toEqual(ALL.map((user) => ({ user, reasons: DEAD.includes(user) ? ['invalid_grant'] : [], reconnected: 0 })));
    for (const user of DEAD) {
      const mark = await f.stored(user);
      expect(mark.reconnect).toEqual({ reason: 'invalid_grant', since: expect.any(Number) });
      expect(statuses(reports, user)).toEqual(Array(4).fill({ status: 'needs_reconnect', reason: 'invalid_grant', since: mark.reconnect!.since, ...(refreshedAt ? { refreshedAt: expect.any(Number) } : {}) }));
    }
    for (const user of LIVE) expect(statuses(reports, user)).toEqual(Array(4).fill({ status: 'connected', ...(refreshedAt ? { refreshedAt: expect.any(Number) } : {}) }));

    // User 0 connects again in process 1: onReconnected once (there), and every process calls for them again.
    f.workers[1]!.send({ type: 'connect', user: 0, tokens: f.issue(0) });
    await f.workers[1]!.next('done');
    expect(await f.round({ api: true, only: [0] })).toMatchObject({ succeeded: 4, failures: {} });
    reports = await f.reports([0]);
    expect(reports.map((r) => r.reconnected[0] ?? 0)).toEqual([0, 1, 0, 0]);
    expect(statuses(reports, 0).map((s) => s.status)).toEqual(Array(4).fill('connected'));

    // User 4 disconnects in process 2: the store holds no tokens, every process sees `none`, and the processes that held
    // the user's tokens (their access token now revoked) never write them back nor refresh them.
    const beforeDisconnect = requests(f);
    f.workers[2]!.send({ type: 'disconnect', user: 4 });
    await f.workers[2]!.next('done');
    expect(f.fake.stats.requests['POST /oauth/revoke']).toBe(DEAD.length + 1); // the test's 4, and the disconnect's
    const gone = await f.round({ api: true, only: [4] });
    expect(gone).toMatchObject({ succeeded: 0, failures: { 'ReauthorizationRequiredError:no_tokens': 4 } });
    await f.round({ force: true, only: [4] });
    expect(requests(f).token).toBe(beforeDisconnect.token);
    expect((await f.stored(4)).tokens).toBeUndefined();
    reports = await f.reports([4]);
    expect(statuses(reports, 4)).toEqual(Array(4).fill({ status: 'none' }));
    expect(told(reports, [4])).toEqual([{ user: 4, reasons: [], reconnected: 0 }]);
  });
}

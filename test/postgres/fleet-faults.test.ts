/**
 * Issue 29: PostgreSQL restarted (`pg_ctl restart -m fast`, and `-m immediate`: a crash, then recovery), its backends
 * killed (`pg_terminate_backend`), a statement stalled past its bound by a row lock held by another session, and a
 * pool exhausted, while a fleet of 4 worker processes serves its users against a service that revokes the whole grant
 * when a rotated-out refresh token comes back. Counted in every scenario: users logged out (no tokens stored, or the
 * stored refresh token refused), rotated-out refresh tokens sent, and failures by name. Never time.
 * Wanted: 0 logged out, 0 rotated-out sent, every failure a TokenStoreError (SharedTokenStoreError, or the manager's
 * own TokenStoreError), and the next round without a failure.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, refreshAndStall, refreshesReach, type RoundTotals, stallHoldersSave, starveHolderMidRefresh, startFleet, total } from '../redis/fleet/fleet-rig.js';
import { type PostgresServer, startPostgresServer } from './postgres-server.js';

let server: PostgresServer | undefined;
let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  await server?.stop();
  fleet = undefined;
  server = undefined;
});

/**
 * The statement bound of these scenarios: short, so a statement to a server that is gone fails soon, yet far above
 * what a statement takes on a loaded 2-core machine (the rounds before the fault must not fail on time alone). The
 * lock's expiry is far above a restart, so a holder keeps its lock through one.
 */
const STATEMENT_TIMEOUT_MS = 4_000;
const LOCK_TTL_MS = 15_000;
const TYPED = ['SharedTokenStoreError', 'TokenStoreError'];

async function fleetOf(users: number, { storeTimeoutMs, oauthTimeoutMs, ...options }: { poolSize?: number; storeTimeoutMs?: number; oauthTimeoutMs?: number } = {}): Promise<Fleet> {
  server = await startPostgresServer();
  fleet = await startFleet({ redis: { kind: 'postgres', url: server.url, ...options }, users, commandTimeoutMs: STATEMENT_TIMEOUT_MS, lockTtlMs: LOCK_TTL_MS, storeTimeoutMs, oauthTimeoutMs });
  return fleet;
}


function untyped(totals: RoundTotals): string[] {
  return Object.keys(totals.failures).filter((name) => !TYPED.includes(name));
}

describe('PostgreSQL faults under a fleet of 4 processes', () => {
  it.each(['fast', 'immediate'] as const)(
    'restarted (pg_ctl restart -m %s) during a storm of refreshes: nobody logged out, no rotated-out refresh token sent, every failure typed',
    { timeout: 180_000 },
    async (mode) => {
      const f = await fleetOf(50);
      const first = await f.round();
      expect(first).toEqual({ succeeded: 200, failures: {}, refreshesSent: 50, marked: 0, replacedSent: 0, refusedSent: 0 });

      // Every token refused at once; PostgreSQL restarts once a fifth of the users were refreshed again.
      const during = f.round({ force: true, concurrency: 5 });
      await refreshesReach(f, 60);
      await server!.restart(mode);
      const interrupted = await during;
      const healed = await f.round({ force: true });
      const loggedOut = await f.loggedOut();
      console.log(`PostgreSQL restarted (-m ${mode}) during a storm of refreshes:`, JSON.stringify({ interrupted, healed, loggedOut }));
      expect(untyped(interrupted)).toEqual([]);
      expect(healed.failures).toEqual({});
      expect(total(first, interrupted, healed).replacedSent).toBe(0);
      expect(loggedOut).toBe(0);
    },
  );

  it('backends terminated (pg_terminate_backend) again and again during a storm of refreshes: nobody logged out, every failure typed', { timeout: 180_000 }, async () => {
    const f = await fleetOf(50);
    expect(await f.round()).toMatchObject({ succeeded: 200, failures: {}, refreshesSent: 50 });

    const during = f.round({ force: true, concurrency: 5 });
    let terminated = 0;
    for (const at of [60, 70, 80, 90]) {
      await refreshesReach(f, at);
      const killed = await f.pool!.query(
        "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND application_name = ''",
      );
      terminated += killed.rows[0].n as number;
    }
    const interrupted = await during;
    const healed = await f.round({ force: true });
    const loggedOut = await f.loggedOut();
    console.log('Backends terminated during a storm of refreshes:', JSON.stringify({ terminated, interrupted, healed, loggedOut }));
    expect(terminated).toBeGreaterThan(0);
    expect(untyped(interrupted)).toEqual([]);
    expect(healed.failures).toEqual({});
    expect(total(interrupted, healed).replacedSent).toBe(0);
    expect(loggedOut).toBe(0);
  });

  it('a save stalled past its bound by a row lock another session holds: the save is settled before the lock is given up, nobody is logged out', { timeout: 120_000 }, async () => {
    const f = await fleetOf(10);
    expect(await f.round()).toMatchObject({ succeeded: 40, failures: {}, refreshesSent: 10 });

    const [holder, ...others] = f.workers;
    holder!.send({ type: 'pause-next-refresh' });
    holder!.send({ type: 'round', users: [0], concurrency: 1, force: true, tell: true });
    await holder!.next('refreshed'); // the service rotated user 0's refresh token; the answer is not saved yet
    for (const w of others) w.send({ type: 'round', users: [0], concurrency: 1, force: true, tell: true });
    await Promise.all(others.map((w) => w.next('waiting')));
    // Another session locks user 0's row: every write to it now waits past its bound.
    const blocker = new pg.Client({ connectionString: server!.url, application_name: 'blocker' });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM postsched_tokens WHERE key = $1 FOR UPDATE', [f.keys[0]]);
    holder!.send({ type: 'continue' });
    await holder!.next('save-failed');
    await holder!.next('save-failed'); // twice past the bound
    await blocker.query('COMMIT');
    await blocker.end();
    const rounds = await Promise.all(f.workers.map((w) => w.next('round-done')));

    const after = await f.round({ force: true, only: [0] });
    const all = total(...rounds, after);
    console.log('A save stalled by a row lock past its bound:', JSON.stringify(all));
    expect(untyped(all)).toEqual([]);
    expect(all.replacedSent).toBe(0);
    expect(after.failures).toEqual({});
    expect(await f.loggedOut()).toBe(0);
  });

  it("a save stalled past the manager's storeTimeoutMs (an overloaded pool): the holder keeps the row's lock until the save lands, no process refreshes the rotated-out refresh token, nobody is logged out", { timeout: 120_000 }, async () => {
    // The manager's bound below the statements': the save stalls past it with every statement still answering.
    const f = await fleetOf(5, { storeTimeoutMs: 2_000 });
    expect(await f.round()).toMatchObject({ succeeded: 20, failures: {}, refreshesSent: 5 });

    const stalled = await stallHoldersSave(f);
    const loggedOut = await f.loggedOut();
    console.log("A save stalled past storeTimeoutMs:", JSON.stringify({ ...stalled, loggedOut }));
    // No refresh with the refresh token the holder's refresh replaced, nobody logged out.
    expect(total(stalled.holder, stalled.others, stalled.after).refusedSent).toBe(0);
    expect(loggedOut).toBe(0);
    // The call that refreshed fails, typed, past its bound; its rotation is not lost.
    expect(stalled.holder).toMatchObject({ succeeded: 0, failures: { TokenStoreError: 1 }, refreshesSent: 1 });
    // The others waited for the holder's lock and got its tokens once its save landed.
    expect(stalled.waited).toBe(3);
    expect(stalled.others).toEqual({ succeeded: 3, failures: {}, refreshesSent: 0, marked: 0, replacedSent: 0, refusedSent: 0 });
    expect(stalled.after).toMatchObject({ failures: {}, refusedSent: 0 });
  });

  it("a process killed while it keeps the row's lock for a stalled save: the lease expires, the other processes are not blocked", { timeout: 120_000 }, async () => {
    // The lease (lockTtlMs) expires unextended once the holder is killed.
    const f = await fleetOf(5, { storeTimeoutMs: 2_000, oauthTimeoutMs: 5_000 });
    expect(await f.round()).toMatchObject({ succeeded: 20, failures: {}, refreshesSent: 5 });

    const held = await refreshAndStall(f);
    const [holder, ...others] = f.workers;
    await holder!.kill(); // SIGKILL: its lease is no longer extended, nor released
    const rounds = await Promise.all(
      others.map((w) => {
        w.send({ type: 'round', users: [0], concurrency: 1, force: true });
        return w.next('round-done');
      }),
    );
    const othersRound = total(...rounds);
    const lease = (await f.pool!.query('SELECT lock_owner IS NOT NULL AND lock_expires_at > now() AS held FROM postsched_tokens WHERE key = $1', [f.keys[0]])).rows[0];
    console.log('A holder killed while keeping the lock for a stalled save:', JSON.stringify({ held, others: othersRound }));
    expect(held).toMatchObject({ failures: { TokenStoreError: 1 }, refreshesSent: 1 });
    // The lease expired after lockTtlMs: each of the others got the lock (and, the rotation having died with the
    // process that held it, the service refused the refresh token it replaced): none of them failed on the lock.
    expect(othersRound.succeeded + Object.values(othersRound.failures).reduce((a, b) => a + b, 0)).toBe(3);
    expect(Object.keys(othersRound.failures).filter((name) => TYPED.includes(name))).toEqual([]);
    expect(othersRound.refreshesSent).toBeGreaterThan(0);
    expect(lease).toEqual({ held: false });
  });

  it("the holder's process stopped (starved) mid-refresh past the default lockTtlMs, under a lockTtlMs longer than the stop: it keeps its lease, no process refreshes the rotated-out refresh token, nobody is logged out", { timeout: 120_000 }, async () => {
    const f = await fleetOf(5);
    expect(await f.round()).toMatchObject({ succeeded: 20, failures: {}, refreshesSent: 5 });

    const pool = f.pool!;
    const { lost, all, after } = await starveHolderMidRefresh(
      f,
      {
        owner: async () => {
          const { rows } = await pool.query<{ owner: string | null }>(
            'SELECT lock_owner AS owner FROM postsched_tokens WHERE key = $1 AND lock_expires_at > clock_timestamp()',
            [f.keys[0]],
          );
          return rows[0]?.owner ?? null;
        },
        now: async () => Number((await pool.query<{ ms: string }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms')).rows[0]!.ms),
      },
      5_000, // past the default lockTtlMs (3 s), which would have let the others take it over; below LOCK_TTL_MS
    );
    const loggedOut = await f.loggedOut();
    console.log("PostgreSQL: the holder's process stopped mid-refresh past lockTtlMs:", JSON.stringify({ lost, ...all, loggedOut }));
    expect(all.refusedSent).toBe(0);
    expect(loggedOut).toBe(0);
    expect(lost).toBe(false);
    expect(after.failures).toEqual({});
  });

  it('a pool exhausted (one connection, stuck behind a row lock): the other calls fail typed past the bound, the next round succeeds', { timeout: 120_000 }, async () => {
    const f = await fleetOf(20, { poolSize: 1 });
    expect(await f.round()).toMatchObject({ succeeded: 80, failures: {}, refreshesSent: 20 });

    const blocker = new pg.Client({ connectionString: server!.url, application_name: 'blocker' });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM postsched_tokens WHERE key = $1 FOR UPDATE', [f.keys[0]]);
    // Process 0 refreshes user 0 first: taking the row's lock waits for the blocker, holding the pool's one
    // connection; its calls for the other users wait for the pool.
    const stuck = await f.round({ force: true, concurrency: 20, workers: [0], only: [0, ...f.keys.slice(1).map((_, i) => i + 1)] });
    await blocker.query('COMMIT');
    await blocker.end();
    const healed = await f.round({ force: true });
    const loggedOut = await f.loggedOut();
    console.log('A pool exhausted behind a row lock:', JSON.stringify({ stuck, healed, loggedOut }));
    expect(Object.values(stuck.failures).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(untyped(stuck)).toEqual([]);
    expect(healed.failures).toEqual({});
    expect(total(stuck, healed).replacedSent).toBe(0);
    expect(loggedOut).toBe(0);
  });
});

/**
 * PostgreSQL down during refreshes and lock attempts (short leases, no 40 s waits):
 * - down longer than a refresh's lease while the holder saves refreshed tokens: the lease expires, another process
 *   takes it; it must not refresh with the refresh token the holder's refresh rotated out (the service revokes the
 *   grant): it waits for the holder's save, which lands once PostgreSQL is back;
 * - a failed take is released only when it may have landed (a time-out), not when the statement never ran (the
 *   connection refused), and the releases of one row's failed takes share one loop whose tries back off, instead of
 *   one loop per failed attempt (which sent thousands of release statements per outage). Counted: release statements.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenTable, PostgresTokenStore } from '@postsched/sdk/postgres';
import { outagePastLease } from '../hostile/outage-rig.js';
import { type PostgresServer, startPostgresServer } from './postgres-server.js';

let server: PostgresServer;
let pool: pg.Pool;
beforeAll(async () => {
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: server.url });
  pool.on('error', () => {});
  await createTokenTable(pool);
});
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

describe('PostgreSQL down past the lease during a save', () => {
  it('logs nobody out: the process that takes the expired lease waits for the holder to save its rotation', { timeout: 60_000 }, async () => {
    let down = false;
    // Every statement of the stores fails while PostgreSQL is "down" (the connection refused).
    const failing = { query: (config: never) => (down ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })) : pool.query(config)) };
    const key = (user: string) => `outage_${user}`;
    const result = await outagePastLease(
      {
        // A lease of at least twice the holder's save retries (a second apart at most): the taker waits one lease for it.
        store: (user) => new PostgresTokenStore({ pool: failing as unknown as pg.Pool, key: key(user), lockTtlMs: 2_000, encryptionKey: Buffer.alloc(32, 3) }),
        setDown: (value) => (down = value),
        async leaseExpired(user) {
          for (;;) {
            const { rows } = await pool.query('SELECT lock_expires_at <= clock_timestamp() AS expired FROM postsched_tokens WHERE key = $1', [key(user)]);
            if (rows[0]?.expired === true) return;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        },
      },
      ['u1', 'u2', 'u3'],
    );
    expect(result.loggedOut).toBe(0);
    expect(result.refreshes).toBe(3); // one per user: the next process used the holder's tokens
    expect(result.next).toEqual(['at_u1_2', 'at_u2_2', 'at_u3_2']);
  });
});

/** A pool that counts release statements and fails (refused) or hangs (frozen) while told to. */
function faulty() {
  const state = { mode: 'up' as 'up' | 'refused' | 'frozen', releases: 0 };
  const wrapper = {
    query(config: { text: string }) {
      if (/SET lock_owner = NULL/.test(config.text)) state.releases++;
      if (state.mode === 'refused') return Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
      if (state.mode === 'frozen') return new Promise(() => {}); // never answers: the store's statement time-out ends it
      return pool.query(config as never);
    },
  };
  return { state, pool: wrapper as unknown as pg.Pool };
}

describe('lock attempts while PostgreSQL is down', () => {
  it('the connection refused: 20 failed takes, no release statement (the takes never ran)', async () => {
    const { state, pool: failing } = faulty();
    const store = new PostgresTokenStore({ pool: failing, key: `lock_outage_${crypto.randomUUID()}`, encryptionKey: Buffer.alloc(32, 1) });
    state.mode = 'refused';
    for (let attempt = 0; attempt < 20; attempt++) await expect(store.lock(async () => 'ran')).rejects.toMatchObject({ code: 'unavailable' });
    expect(state.releases).toBe(0);
    state.mode = 'up';
    expect(await store.lock(async () => 'ran')).toBe('ran');
  });

  it('frozen: 20 takes time out (their outcome unknown), and their releases share one backing-off loop', { timeout: 30_000 }, async () => {
    const { state, pool: failing } = faulty();
    const store = new PostgresTokenStore({ pool: failing, key: `lock_outage_${crypto.randomUUID()}`, statementTimeoutMs: 50, lockTtlMs: 60_000, encryptionKey: Buffer.alloc(32, 1) });
    state.mode = 'frozen';
    for (let attempt = 0; attempt < 20; attempt++) await expect(store.lock(async () => 'ran')).rejects.toMatchObject({ code: 'timeout' });
    // One loop: its first try at once, then a try per round, each round twice as far from the last (0.1 s, 0.2 s, …):
    // far fewer than one release per failed take, however slow the machine.
    expect(state.releases).toBeGreaterThan(0);
    expect(state.releases).toBeLessThan(20);
    state.mode = 'up';
  });
});

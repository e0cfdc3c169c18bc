/**
 * Lock attempts during a PostgreSQL outage: a failed take is released only when it may have landed (a time-out), not
 * when the statement never ran (the connection refused); and the releases of one row's failed takes share one loop,
 * its tries further and further apart, instead of one loop per failed attempt (which sent thousands of release
 * statements per outage). Counted: release statements sent.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenTable, PostgresTokenStore } from '@postsched/sdk/postgres';
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

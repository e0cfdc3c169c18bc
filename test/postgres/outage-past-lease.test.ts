/**
 * PostgreSQL down longer than a refresh's lease while the holder saves refreshed tokens: the lease expires, another
 * process takes it; it must not refresh with the refresh token the holder's refresh rotated out (the service revokes
 * the grant): it waits for the holder's save, which lands once PostgreSQL is back. Short leases, no 40 s waits.
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
        store: (user) => new PostgresTokenStore({ pool: failing as unknown as pg.Pool, key: key(user), lockTtlMs: 300, encryptionKey: Buffer.alloc(32, 3) }),
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

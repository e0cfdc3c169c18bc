/**
 * examples/keep-grants-alive.ts as copied, in its own process (ONCE=1: one run, as from a cron), against the fake
 * service and a real PostgreSQL server (both on 127.0.0.1): it refreshes the idle grants of the table once each,
 * leaves the marked one alone and counts it among the users to reconnect.
 */
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTokenTable, PostgresTokenTable } from '@postsched/sdk/postgres';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { start, stopAll } from '../support/processes.js';
import { type PostgresServer, startPostgresServer } from '../postgres/postgres-server.js';

const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');
const EXAMPLE = fileURLToPath(new URL('../../examples/keep-grants-alive.ts', import.meta.url));

let postgres: PostgresServer;
let pool: pg.Pool;
let fake: FakeService;
beforeAll(async () => {
  postgres = await startPostgresServer();
  pool = new pg.Pool({ connectionString: postgres.url });
  pool.on('error', () => {});
  fake = createFakeService({});
  await fake.listen();
});
afterAll(async () => {
  await fake?.close();
  await pool?.end();
  await postgres?.stop();
});

it('keep-grants-alive.ts refreshes each idle grant once, skips the marked one and counts it: exit 0', { timeout: 60_000 }, async () => {
  const app = fake.registerApp({ redirectUris: ['http://127.0.0.1:3000/callback'] });
  await createTokenTable(pool);
  const table = new PostgresTokenTable({ pool, encryptionKey: ENCRYPTION_KEY });
  const issued: string[] = [];
  for (const userId of ['ann', 'bob', 'cid']) {
    const tokens = fake.issueTokenSet({ clientId: app.clientId });
    issued.push(tokens.refreshToken!);
    await table.store(userId).set({ ...tokens, userId });
  }
  await pool.query(`UPDATE postsched_tokens SET refreshed_at = now() - interval '30 days'`);
  await pool.query(`UPDATE postsched_tokens SET needs_reconnect_reason = 'invalid_grant', needs_reconnect_since = now() WHERE key = 'cid'`);

  const child = start(EXAMPLE, [], {
    POSTSCHED_BASE_URL: fake.baseUrl,
    POSTSCHED_CLIENT_ID: app.clientId,
    POSTSCHED_CLIENT_SECRET: app.clientSecret,
    DATABASE_URL: postgres.url,
    TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
    ONCE: '1',
  });
  try {
    expect(await child.exited, child.output()).toBe(0);
  } finally {
    await stopAll(child);
  }
  expect(child.stdout()).toContain('Kept alive: refreshed 2, skipped 0, dead 0, failed 0; 1 users need to reconnect.');
  expect(issued.map((token) => fake.grantOf(token)?.tokenRequests)).toEqual([1, 1, 0]);
});

/**
 * The store kit as users run it: from the built package (dist/, built first when src/ is newer), against
 * `RedisTokenStore` and `PostgresTokenStore` with `lockTtlMs`, each on a real server. The build once dropped the kit's
 * busy loop (code without effect to the bundler), so the holder never stalled and every correct store failed "the
 * lock expires"; the sources (what the other tests run) passed.
 */
import { TEST_KEY } from '../support/token-key.js';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type * as Postgres from '@postsched/sdk/postgres';
import type * as RedisEntry from '@postsched/sdk/redis';
import type * as Testing from '@postsched/sdk/testing';
import { ensureBuilt } from '../../bench/lib/build.js';
import { type PostgresServer, startPostgresServer } from '../postgres/postgres-server.js';
import { type RedisServer, startRedisServer } from '../redis/redis-server.js';

const LOCK_TTL_MS = 1_000;
const dist = (entry: string) => pathToFileURL(join(import.meta.dirname, '../../dist', entry, 'index.js')).href;

let kit: typeof Testing;
let redisEntry: typeof RedisEntry;
let postgresEntry: typeof Postgres;
let redisServer: RedisServer | undefined;
let postgresServer: PostgresServer | undefined;
let redis: Redis | undefined;
let pool: pg.Pool | undefined;

beforeAll(async () => {
  ensureBuilt();
  [kit, redisEntry, postgresEntry] = await Promise.all([import(dist('testing')), import(dist('redis')), import(dist('postgres'))]);
  [redisServer, postgresServer] = await Promise.all([startRedisServer(), startPostgresServer()]);
  redis = new Redis(redisServer.url);
  pool = new pg.Pool({ connectionString: postgresServer.url });
  pool.on('error', () => {});
  await postgresEntry.createTokenTable(pool);
}, 600_000);

afterAll(async () => {
  redis?.disconnect();
  await pool?.end();
  await Promise.all([redisServer?.stop(), postgresServer?.stop()]);
});

/** Runs every check of the built kit; the failures, by name and message. */
async function failures(options: Testing.TokenStoreConformanceOptions): Promise<string[]> {
  const failed: string[] = [];
  const checks = kit.tokenStoreConformance(options);
  expect(checks.map((check) => check.name)).toContain(`the lock expires: a holder that stalls past lockTtlMs (${LOCK_TTL_MS} ms) loses it to the next`);
  for (const check of checks) await check.run().catch((error: Error) => failed.push(`${check.name}: ${error.message}`));
  return failed;
}

it('RedisTokenStore passes every check of the built kit, the lock expiry included', async () => {
  const makeStore = (key: string) => new redisEntry.RedisTokenStore({ encryptionKey: TEST_KEY, redis: redis!, key: `postsched:built-kit:{${key}}`, lockTtlMs: LOCK_TTL_MS });
  expect(await failures({ makeStore, lockTtlMs: LOCK_TTL_MS })).toEqual([]);
}, 120_000);

it('PostgresTokenStore passes every check of the built kit, the lock expiry included', async () => {
  const makeStore = (key: string) => new postgresEntry.PostgresTokenStore({ encryptionKey: TEST_KEY, pool: pool!, key, lockTtlMs: LOCK_TTL_MS });
  expect(await failures({ makeStore, lockTtlMs: LOCK_TTL_MS })).toEqual([]);
}, 120_000);

/**
 * One worker process of the sweep tests and the grants bench (forked through tsx by sweep-rig.ts): a `UserClients`
 * over a `PostgresTokenTable` or a `RedisTokenSpace`, running `keepGrantsAlive` when told.
 *
 * Config (env WORKER_CONFIG, JSON): `SweepWorkerConfig`. In: `sweep` (one run), `loop` (a run every `everyMs` real ms
 * until `stop`), `exit`. Out: `ready`, `swept` (the counts of the run, or of every run of the loop).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { OAuthClient, UserClients, type KeepGrantsAliveResult } from '@postsched/sdk';
import { PostgresTokenTable } from '@postsched/sdk/postgres';
import { RedisTokenSpace } from '@postsched/sdk/redis';
import pg from 'pg';
import { TEST_KEY } from '../support/token-key.js';

export interface SweepWorkerConfig {
  target: { kind: 'postgres' | 'redis'; url: string };
  /** The table (Postgres) or the key prefix (Redis). */
  space: string;
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  olderThanMs: number;
  concurrency: number;
}

export type SweepWorkerCommand = { type: 'sweep' } | { type: 'loop'; everyMs: number } | { type: 'stop' } | { type: 'exit' };
/** `log`: each refresh this process made, `[userId, epoch ms]` (the `loop` only). */
export type SweepWorkerMessage = { type: 'ready' } | ({ type: 'swept'; runs: number; log?: Array<[string, number]> } & KeepGrantsAliveResult);

const config = JSON.parse(process.env['WORKER_CONFIG']!) as SweepWorkerConfig;
const pool = config.target.kind === 'postgres' ? new pg.Pool({ connectionString: config.target.url, max: 8 }) : undefined;
pool?.on('error', () => {});
const redis = config.target.kind === 'redis' ? new Redis(config.target.url) : undefined;
redis?.on('error', () => {});
const store =
  pool !== undefined
    ? new PostgresTokenTable({ pool, table: config.space, encryptionKey: TEST_KEY, statementTimeoutMs: 20_000, lockTtlMs: 120_000 })
    : new RedisTokenSpace({ redis: redis!, prefix: config.space, encryptionKey: TEST_KEY, commandTimeoutMs: 20_000, lockTtlMs: 120_000 });
const oauth = new OAuthClient({ baseUrl: config.baseUrl, clientId: config.clientId, clientSecret: config.clientSecret, redirectUri: 'http://127.0.0.1/callback' });
let log: Array<[string, number]> = [];
const users = new UserClients({ oauth, baseUrl: config.baseUrl, store, managerOptions: { storeTimeoutMs: 30_000 }, onTokens: (userId) => void log.push([userId, Date.now()]) });
const options = { olderThanMs: config.olderThanMs, concurrency: config.concurrency };

const send = (message: SweepWorkerMessage) => process.send!(message);
let stop: AbortController | undefined;
process.on('message', async (command: SweepWorkerCommand) => {
  if (command.type === 'sweep') send({ type: 'swept', runs: 1, ...(await users.keepGrantsAlive(options)) });
  if (command.type === 'stop') stop?.abort();
  if (command.type === 'loop') {
    const controller = (stop = new AbortController());
    const total = { refreshed: 0, skipped: 0, dead: 0, failed: 0 };
    log = [];
    let runs = 0;
    while (!controller.signal.aborted) {
      const counts = await users.keepGrantsAlive({ ...options, signal: controller.signal });
      runs++;
      for (const name of ['refreshed', 'skipped', 'dead', 'failed'] as const) total[name] += counts[name];
      await sleep(command.everyMs, undefined, { signal: controller.signal }).catch(() => {}); // an abort ends the pause
    }
    send({ type: 'swept', runs, ...total, log });
  }
  if (command.type === 'exit') {
    await pool?.end();
    redis?.disconnect();
    process.exit(0);
  }
});
send({ type: 'ready' });

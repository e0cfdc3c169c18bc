/**
 * One worker process of the fleet measure (bench/measures/fleet.ts), forked with --expose-gc: the SDK as built
 * (dist/), one `UserClients` whose users' tokens live in Redis (`RedisTokenStore`, one ioredis client for the
 * process), one call per user in its own shuffled order, `concurrency` at a time.
 *
 * Config: env FLEET_WORKER (JSON, `FleetWorkerConfig`). It sends `ready`; on `go` it runs the calls and sends
 * `done` (`FleetWorkerResult`); on `exit` it closes Redis and exits. Calls not started by `deadline` (epoch ms)
 * count as unfinished, and so do those still in flight then: the worker reports at the deadline.
 */
import type * as Sdk from '@postsched/sdk';
import type * as SdkPostgres from '@postsched/sdk/postgres';
import type * as SdkRedis from '@postsched/sdk/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { settledHeap } from '../lib/heap.js';
import { TEST_KEY } from '../../test/support/token-key.js';

export interface FleetWorkerConfig {
  redisUrl: string;
  /** Set: the users' tokens live in PostgreSQL (`PostgresTokenStore`, one node-postgres pool of 10 for the process) instead. */
  postgresUrl?: string;
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  users: number;
  /** Users of this worker alone, called once before the heap is measured (code compiled, pools made). */
  warmUpUsers: string[];
  concurrency: number;
  deadline: number;
}

export interface FleetWorkerResult {
  type: 'done';
  succeeded: number;
  /** Failed calls by error name (and `reason` for ReauthorizationRequiredError). */
  failed: Record<string, number>;
  /** Calls not started or not finished by the deadline. */
  unfinished: number;
  cpuMs: number;
  wallMs: number;
  /** Peak resident set size, bytes. */
  maxRss: number;
  /** Heap after a full GC with every user cached, less the heap before the UserClients existed, per cached user. */
  heapPerUser: number;
  cachedUsers: number;
  /** SQL statements the process's pool ran from `go` on (PostgreSQL). */
  statements?: number;
}

const config = JSON.parse(process.env['FLEET_WORKER'] ?? '{}') as FleetWorkerConfig;
const send = (message: { type: 'ready' } | FleetWorkerResult) => process.send?.(message);
// The SDK as users get it (see bench/lib/get-contenders.ts): built, untransformed.
const dist = (path: string) => new URL(`../../dist/${path}`, import.meta.url).href;
const { OAuthClient, ReauthorizationRequiredError, UserClients } = (await import(dist('index.node.js'))) as typeof Sdk;
const { RedisTokenStore } = (await import(dist('redis/index.js'))) as typeof SdkRedis;

const oauth = new OAuthClient({ baseUrl: config.baseUrl, clientId: config.clientId, clientSecret: config.clientSecret, redirectUri: 'http://127.0.0.1/callback' });
const ids = Array.from({ length: config.users }, (_, i) => `user_${i}`);
let statements = 0;
let close: () => void;
let store: (userId: string) => Sdk.TokenStore;
if (config.postgresUrl === undefined) {
  const redis = new Redis(config.redisUrl);
  redis.on('error', () => {}); // the stores report Redis failures (SharedTokenStoreError)
  close = () => redis.disconnect();
  store = (userId) => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: `postsched:tokens:{${userId}}` });
} else {
  const { PostgresTokenStore } = (await import(dist('postgres/index.js'))) as typeof SdkPostgres;
  const pool = new pg.Pool({ connectionString: config.postgresUrl, max: 10 });
  pool.on('error', () => {});
  const query = pool.query.bind(pool) as (config: unknown) => Promise<unknown>;
  Object.assign(pool, { query: (q: unknown) => (statements++, query(q)) });
  close = () => void pool.end();
  store = (userId) => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: userId });
}
const options = { oauth, baseUrl: config.baseUrl, store };
{
  const warm = new UserClients(options);
  await Promise.all(config.warmUpUsers.map((userId) => warm.client(userId).accounts.list().toArray()));
  await warm[Symbol.asyncDispose]();
}
const heapBefore = await settledHeap();
const users = new UserClients({ ...options, maxUsers: config.users });

async function run(): Promise<FleetWorkerResult> {
  const order = shuffle([...ids]);
  const failed: Record<string, number> = {};
  let succeeded = 0;
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  statements = 0;
  const worker = async () => {
    for (let i = next++; i < order.length && Date.now() < config.deadline; i = next++) {
      try {
        await users.client(order[i] as string).accounts.list().toArray();
        succeeded++;
      } catch (error) {
        const name = error instanceof ReauthorizationRequiredError ? `${error.name} (${error.reason})` : error instanceof Error ? error.name : typeof error;
        failed[name] = (failed[name] ?? 0) + 1;
      }
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    Promise.all(Array.from({ length: config.concurrency }, worker)),
    new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, config.deadline - Date.now())))),
  ]);
  clearTimeout(timer);
  const wallMs = performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  const failures = Object.values(failed).reduce((a, b) => a + b, 0);
  const heapAfter = await settledHeap();
  return {
    type: 'done',
    succeeded,
    failed,
    unfinished: order.length - succeeded - failures,
    cpuMs: (user + system) / 1000,
    wallMs,
    maxRss: process.resourceUsage().maxRSS * 1024,
    heapPerUser: (heapAfter - heapBefore) / Math.max(1, users.size),
    cachedUsers: users.size,
    ...(config.postgresUrl === undefined ? {} : { statements }),
  };
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

process.on('message', (message: { type: string }) => {
  if (message.type === 'go') void run().then(send);
  if (message.type === 'exit') {
    close();
    process.exit(0);
  }
});
send({ type: 'ready' });

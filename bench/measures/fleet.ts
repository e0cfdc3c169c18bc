/**
 * A fleet (issue 20): 10,000 users (1,000 with --quick) whose tokens all expired, 4 worker processes sharing one real
 * `redis-server` that this measure starts, each making one call per user through `UserClients` in its own shuffled
 * order, against the fake service on 127.0.0.1 that rotates refresh tokens and revokes the grant when a rotated-out
 * one comes back. Counted: refreshes per user, refused refreshes (lost rotations), failed calls, Redis commands per
 * user (`INFO commandstats`, commands run by scripts included), wall time, CPU and peak RSS per worker, heap per
 * cached user. CPU per call with 0 and 100,000 `RedisTokenStore`s created and locked comes from
 * bench/lib/store-overhead.ts. Then the same fleet on one PostgreSQL server (`PostgresTokenStore`): refreshes per user,
 * lost rotations, failed calls, SQL statements per user (counted by the workers' pools).
 */
import { type ChildProcess, execFile, fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { createTokenTable, PostgresTokenStore } from '@postsched/sdk/postgres';
import { RedisTokenStore } from '@postsched/sdk/redis';
import pg from 'pg';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { listenOnLoopback } from '../../src/testing/fake-service/listen.js';
import { startPostgresProcess } from '../../test/support/postgres-process.js';
import { startRedisProcess } from '../../test/support/redis-process.js';
import { probe, TEST_TOOLS, withSystemDirs } from '../../test/support/test-tools.js';
import type { FleetWorkerConfig, FleetWorkerResult } from '../children/fleet-worker.js';
import { fmt, ratioVerdict, type Row, type Section, type Verdict } from '../lib/report.js';
import { measureStoreOverhead } from '../lib/store-overhead.js';
import { median } from '../lib/stats.js';
import { TEST_KEY } from '../../test/support/token-key.js';

const WORKERS = 4;
/** Calls in flight per worker: a busy web worker's share of requests. */
const CONCURRENCY = 50;
const WARM_UP_USERS = 20;
/** A worker's heap bound: 10,000 users at the 3 KB target need 30 MB; past this one is broken, not slow. */
const WORKER_HEAP_MB = 2048;
const APP = { clientId: 'app_fleet_bench', clientSecret: 'secret_fleet_bench_1234', redirectUris: ['http://127.0.0.1/callback'] };
const WORKER_SCRIPT = fileURLToPath(new URL('../children/fleet-worker.ts', import.meta.url));
const USER_HEAP_SCRIPT = fileURLToPath(new URL('../children/user-heap.ts', import.meta.url));

/** Refresh requests as the token endpoint saw them, per user. */
interface RefreshCounts {
  /** Refreshes answered with new tokens, per user. */
  rotated: Map<string, number>;
  /** Refreshes refused (a rotated-out or revoked refresh token sent), per user. */
  refused: Map<string, number>;
}

export async function measureFleet({ quick }: { quick: boolean }): Promise<Section[]> {
  return [await measureRedisFleet({ quick }), await measurePostgresFleet({ quick })];
}

async function measureRedisFleet({ quick }: { quick: boolean }): Promise<Section> {
  const users = quick ? 1_000 : 10_000;
  const deadlineMs = quick ? 120_000 : 300_000;
  const found = probe(TEST_TOOLS[0]!, { ...process.env, PATH: withSystemDirs(process.env['PATH']) });
  if (!('path' in found)) {
    throw new Error('needs redis-server: apt-get install redis-server (or brew install redis), or set REDIS_SERVER_BIN');
  }
  const redisServer = await startRedisProcess(found.path);
  const fake = createFakeService({ refreshTokenReuse: 'revoke-grant', apps: [APP] });
  const counts: RefreshCounts = { rotated: new Map(), refused: new Map() };
  const owners = new Map<string, string>(); // refresh token → user
  const service = await listenOnLoopback(countingRefreshes(fake, owners, counts), 0, '');
  const redis = new Redis(redisServer.url);
  const children: ChildProcess[] = [];
  try {
    const warmUp = (w: number) => Array.from({ length: WARM_UP_USERS }, (_, i) => `warm_${w}_${i}`);
    const ids = Array.from({ length: users }, (_, i) => `user_${i}`);
    await seed(redis, fake, owners, [...ids, ...Array.from({ length: WORKERS }, (_, w) => warmUp(w)).flat()]);

    const deadline = Date.now() + deadlineMs;
    const workers = Array.from({ length: WORKERS }, (_, w) =>
      startWorker(children, {
        redisUrl: redisServer.url,
        baseUrl: service.url,
        clientId: APP.clientId,
        clientSecret: APP.clientSecret,
        users,
        warmUpUsers: warmUp(w),
        concurrency: CONCURRENCY,
        deadline,
      }),
    );
    await Promise.all(workers.map((w) => w.next('ready')));
    // Only the fleet's own calls from here: the seeding and the warm-ups are not counted.
    await redis.call('CONFIG', 'RESETSTAT');
    for (const name of ['rotated', 'refused'] as const) counts[name].clear();
    const started = performance.now();
    for (const w of workers) w.send('go');
    // A worker that dies (out of memory: a store that leaks per call) counts all its calls as failed.
    const results = await Promise.all(workers.map((w) => (w.next('done') as Promise<FleetWorkerResult>).catch((error: Error) => crashed(users, error))));
    const wallMs = performance.now() - started;
    const commands = parseCommandStats(String(await redis.call('INFO', 'commandstats')));
    for (const w of workers) w.send('exit');
    const memoryHeapPerUser = await heapPerUserInMemory(users);
    const overhead = await storeOverhead(quick);
    return report({ users, results, wallMs, counts, commands, memoryHeapPerUser, overhead, quick });
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    redis.disconnect();
    await service.close();
    await fake.close();
    await redisServer.stop();
  }
}

/**
 * The fake's handler, counting each refresh by user: the refresh token sent names the user (seeded tokens, then
 * each rotation's answer), the answer says whether the service rotated or refused it.
 */
function countingRefreshes(fake: FakeService, owners: Map<string, string>, counts: RefreshCounts): (request: Request) => Promise<Response> {
  return async (request) => {
    if (request.method !== 'POST' || !request.url.endsWith('/oauth/token')) return fake.handler(request);
    const form = new URLSearchParams(await request.clone().text());
    const response = await fake.handler(request);
    if (form.get('grant_type') !== 'refresh_token') return response;
    const user = owners.get(form.get('refresh_token') ?? '') ?? 'unknown';
    const tally = response.ok ? counts.rotated : counts.refused;
    tally.set(user, (tally.get(user) ?? 0) + 1);
    if (response.ok) {
      const body = (await response.clone().json()) as { refresh_token?: string };
      if (body.refresh_token !== undefined) owners.set(body.refresh_token, user);
    }
    return response;
  };
}

/** Every user signed in earlier; their access tokens have expired since. Stored as the SDK stores them. */
async function seed(redis: Redis, fake: FakeService, owners: Map<string, string>, ids: string[]): Promise<void> {
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < ids.length; i = next++) {
      const userId = ids[i] as string;
      const tokens = fake.issueTokenSet({ clientId: APP.clientId, scopes: ['accounts:read'] });
      owners.set(tokens.refreshToken ?? '', userId);
      await new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: `postsched:tokens:{${userId}}` }).set({ ...tokens, expiresAt: Date.now() - 60_000 });
    }
  };
  await Promise.all(Array.from({ length: 100 }, writer));
}

interface FleetWorker {
  next(type: 'ready' | 'done'): Promise<unknown>;
  send(type: 'go' | 'exit'): void;
}

/** Forks a worker (tsx for its own source; it imports the SDK from dist/) and reads its messages in order. */
function startWorker(children: ChildProcess[], config: FleetWorkerConfig): FleetWorker {
  const child = fork(WORKER_SCRIPT, [], {
    execArgv: ['--expose-gc', `--max-old-space-size=${WORKER_HEAP_MB}`, '--import', 'tsx'],
    env: { ...process.env, FLEET_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const received: Array<{ type: string }> = [];
  const waiting: Array<{ type: string; resolve: (message: unknown) => void; reject: (error: Error) => void }> = [];
  child.on('message', (message: { type: string }) => {
    const at = waiting.findIndex((w) => w.type === message.type);
    if (at === -1) received.push(message);
    else waiting.splice(at, 1)[0]?.resolve(message);
  });
  child.once('exit', (code, signal) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`a fleet worker exited (${code ?? signal}) before sending ${w.type}`));
  });
  return {
    next(type) {
      const at = received.findIndex((m) => m.type === type);
      if (at !== -1) return Promise.resolve(received.splice(at, 1)[0]);
      if (child.exitCode !== null || child.signalCode !== null) return Promise.reject(new Error(`a fleet worker exited before sending ${type}`));
      return new Promise((resolve, reject) => waiting.push({ type, resolve, reject }));
    },
    send(type) {
      if (child.connected) child.send({ type });
    },
  };
}

/** Heap per cached user with UserClients' default store (MemoryTokenStore, one process), in its own child. */
async function heapPerUserInMemory(users: number): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', USER_HEAP_SCRIPT, String(users)], { maxBuffer: 1024 * 1024 });
  return (JSON.parse(stdout.trim().split('\n').at(-1)!) as { heapPerUser: number }).heapPerUser;
}

/** What a worker that died is counted as: every call failed, nothing measured. */
function crashed(users: number, error: Error): FleetWorkerResult {
  return { type: 'done', succeeded: 0, failed: { [`worker died: ${error.message}`]: users }, unfinished: 0, cpuMs: NaN, wallMs: NaN, maxRss: NaN, heapPerUser: NaN, cachedUsers: 0 };
}

/** `INFO commandstats` → calls per command (`get`, `evalsha`, `set`, …), the bench's own `info` and `config` left out. */
function parseCommandStats(info: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const [, name, count] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (/^(info|config)\b/.test(name as string)) continue;
    calls.set(name as string, Number(count));
  }
  return calls;
}

/** CPU per call with no store and with 100,000 RedisTokenStores created and locked. */
interface StoreOverheadRows {
  rows: Row[];
  verdict: Verdict;
}

/** bench/lib/store-overhead.ts: client CPU per call with no store, and with that many stores created and locked. */
async function storeOverhead(quick: boolean): Promise<StoreOverheadRows> {
  const { stores, cpuPerCallNoStores, cpuPerCallWithStores, ratio } = await measureStoreOverhead(quick ? { stores: 20_000, rounds: 2 } : {});
  return {
    rows: [
      { name: 'CPU per call, no RedisTokenStore', value: fmt.ms(cpuPerCallNoStores) },
      { name: `CPU per call, ${fmt.int(stores)} stores created and locked`, value: fmt.ms(cpuPerCallWithStores), ratio: fmt.x(ratio) },
    ],
    verdict: ratioVerdict(`CPU per call with ${fmt.int(stores)} RedisTokenStores created and locked ≤ 1.10x with none`, ratio, 1.1, '≤'),
  };
}

function report(run: {
  users: number;
  results: FleetWorkerResult[];
  wallMs: number;
  counts: RefreshCounts;
  commands: Map<string, number>;
  memoryHeapPerUser: number;
  overhead: StoreOverheadRows;
  quick: boolean;
}): Section {
  const { users, results, counts, commands } = run;
  const fleetUser = (userId: string) => userId.startsWith('user_');
  const sum = (map: Map<string, number>) => [...map].filter(([userId]) => fleetUser(userId)).reduce((total, [, n]) => total + n, 0);
  const rotated = sum(counts.rotated);
  const refused = sum(counts.refused);
  const loggedOut = [...counts.refused.keys()].filter(fleetUser).length;
  const attempts = (userId: string) => (counts.rotated.get(userId) ?? 0) + (counts.refused.get(userId) ?? 0);
  const notOnce = Array.from({ length: users }, (_, i) => attempts(`user_${i}`)).filter((n) => n !== 1).length;
  const failures = new Map<string, number>();
  for (const r of results) for (const [name, n] of Object.entries(r.failed)) failures.set(name, (failures.get(name) ?? 0) + n);
  const unfinished = results.reduce((total, r) => total + r.unfinished, 0);
  const failed = [...failures.values()].reduce((a, b) => a + b, 0) + unfinished;
  const totalCommands = [...commands.values()].reduce((a, b) => a + b, 0);
  const commandsPerUser = totalCommands / users;
  const heapPerUser = median(results.map((r) => r.heapPerUser).filter((bytes) => !Number.isNaN(bytes)));
  const calls = users * results.length;
  const byCommand = [...commands].sort((a, b) => b[1] - a[1]).map(([name, n]) => `${name} ${(n / users).toFixed(2)}`).join(', ');
  const failureList = [...failures].map(([name, n]) => `${name} ${fmt.int(n)}`).join(', ');

  const verdicts: Verdict[] = [
    { target: 'exactly 1 refresh per user, all processes together', measured: `${((rotated + refused) / users).toFixed(3)} per user; ${fmt.int(notOnce)} users not exactly once`, met: notOnce === 0 },
    { target: '0 lost rotations (refreshes refused: a rotated-out refresh token sent)', measured: fmt.int(refused), met: refused === 0 },
    { target: '0 failed calls', measured: fmt.int(failed), met: failed === 0 },
    // Users whose calls never ran cost no command: a count from a run cut off at the deadline decides nothing.
    {
      target: '≤ 16 Redis commands per user (INFO commandstats, scripts included)',
      measured: `${commandsPerUser.toFixed(1)}${unfinished > 0 ? ' (run cut off at the deadline)' : ''}`,
      met: unfinished > 0 ? undefined : commandsPerUser <= 16,
    },
    { target: 'heap per cached user ≤ 3 KB (RedisTokenStore, in the fleet)', measured: fmt.kb(heapPerUser), met: heapPerUser <= 3 * 1024 },
    run.overhead.verdict,
  ];
  return {
    title: `Fleet: ${fmt.int(users)} users × ${results.length} worker processes on one Redis, every token expired`,
    method:
      `${results.length} worker processes (forked, --expose-gc), each with one \`UserClients\` over \`RedisTokenStore\`s on one ioredis client ` +
      `and the SDK as built (dist/), make one \`accounts.list()\` call per user in their own shuffled order, ${CONCURRENCY} at a time, ` +
      `against the fake service on 127.0.0.1 (rotating refresh tokens; a rotated-out one revokes the grant) and one redis-server ` +
      `started for the run (no persistence). Every user's stored access token has expired. Redis commands from \`INFO commandstats\` ` +
      `after \`CONFIG RESETSTAT\` (seeding and warm-up left out). Heap per cached user: heapUsed after forced GCs with every user ` +
      `cached, less heapUsed before the \`UserClients\` was made (after a ${WARM_UP_USERS}-user warm-up), ÷ users, median of the workers. ` +
      `Calls not done within ${run.quick ? 120 : 300} s count as failed, and so do all of a worker that dies (heap bound ${WORKER_HEAP_MB} MB).`,
    unit: 'value',
    rows: [
      { name: 'refreshes per user', value: ((rotated + refused) / users).toFixed(3), note: `${fmt.int(rotated + refused)} refresh requests for ${fmt.int(users)} users; ${fmt.int(notOnce)} users not exactly once` },
      { name: 'lost rotations (refreshes refused)', value: fmt.int(refused), note: `${fmt.int(loggedOut)} users logged out (grant revoked)` },
      { name: 'failed calls', value: fmt.int(failed), note: `of ${fmt.int(calls)}${failureList === '' ? '' : `: ${failureList}`}${unfinished > 0 ? `; ${fmt.int(unfinished)} not done by the deadline` : ''}` },
      { name: 'Redis commands per user', value: commandsPerUser.toFixed(1), note: byCommand },
      { name: 'wall time', value: `${(run.wallMs / 1000).toFixed(1)} s`, note: `${fmt.int(calls / (run.wallMs / 1000))} calls/s` },
      ...results.map((r, i) => ({
        name: `worker ${i + 1}: CPU, peak RSS`,
        value: `${(r.cpuMs / 1000).toFixed(1)} s`,
        note: `${fmt.mb(r.maxRss)} RSS; ${fmt.int(r.succeeded)} calls ok; ${fmt.int(r.cachedUsers)} users cached`,
      })),
      { name: 'heap per cached user, RedisTokenStore', value: fmt.kb(heapPerUser), note: `the fleet's workers: ${results.map((r) => fmt.kb(r.heapPerUser)).join(', ')}` },
      {
        name: 'heap per cached user, default MemoryTokenStore',
        value: fmt.kb(run.memoryHeapPerUser),
        note: `${fmt.int(users)} users connected and called once, one process, no Redis (bench/children/user-heap.ts)`,
      },
      ...run.overhead.rows,
    ],
    target: verdicts.map((v) => v.target).join('; '),
    met: verdicts.every((v) => v.met === true) ? true : verdicts.some((v) => v.met === false) ? false : undefined,
    verdicts,
    notes: [`${os.cpus().length} cores shared by the ${results.length} workers, redis-server and the fake service (this process).`],
  };
}

/** The fleet on one PostgreSQL server this measure starts (initdb in a temp folder), every token expired. */
export async function measurePostgresFleet({ quick }: { quick: boolean }): Promise<Section> {
  const users = quick ? 1_000 : 10_000;
  const deadlineMs = quick ? 120_000 : 300_000;
  const tool = TEST_TOOLS.find((t) => t.key === 'postgresBinDir')!;
  const found = probe(tool, { ...process.env, PATH: withSystemDirs(process.env['PATH']) });
  if (!('path' in found)) throw new Error('needs PostgreSQL: apt-get install postgresql, or set POSTGRES_BIN_DIR');
  const server = await startPostgresProcess(found.path);
  const fake = createFakeService({ refreshTokenReuse: 'revoke-grant', apps: [APP] });
  const counts: RefreshCounts = { rotated: new Map(), refused: new Map() };
  const owners = new Map<string, string>();
  const service = await listenOnLoopback(countingRefreshes(fake, owners, counts), 0, '');
  const pool = new pg.Pool({ connectionString: server.url });
  pool.on('error', () => {});
  const children: ChildProcess[] = [];
  try {
    await createTokenTable(pool);
    const warmUp = (w: number) => Array.from({ length: WARM_UP_USERS }, (_, i) => `warm_${w}_${i}`);
    const ids = [...Array.from({ length: users }, (_, i) => `user_${i}`), ...Array.from({ length: WORKERS }, (_, w) => warmUp(w)).flat()];
    let next = 0;
    const writer = async () => {
      for (let i = next++; i < ids.length; i = next++) {
        const tokens = fake.issueTokenSet({ clientId: APP.clientId, scopes: ['accounts:read'] });
        owners.set(tokens.refreshToken ?? '', ids[i] as string);
        await new PostgresTokenStore({ encryptionKey: TEST_KEY, pool, key: ids[i] as string }).set({ ...tokens, expiresAt: Date.now() - 60_000 });
      }
    };
    await Promise.all(Array.from({ length: 10 }, writer));
    const deadline = Date.now() + deadlineMs;
    const workers = Array.from({ length: WORKERS }, (_, w) =>
      startWorker(children, { redisUrl: '', postgresUrl: server.url, baseUrl: service.url, clientId: APP.clientId, clientSecret: APP.clientSecret, users, warmUpUsers: warmUp(w), concurrency: CONCURRENCY, deadline }),
    );
    await Promise.all(workers.map((w) => w.next('ready')));
    for (const name of ['rotated', 'refused'] as const) counts[name].clear();
    const started = performance.now();
    for (const w of workers) w.send('go');
    const results = await Promise.all(workers.map((w) => (w.next('done') as Promise<FleetWorkerResult>).catch((error: Error) => crashed(users, error))));
    const wallMs = performance.now() - started;
    for (const w of workers) w.send('exit');
    const fleetUser = (userId: string) => userId.startsWith('user_');
    const sum = (map: Map<string, number>) => [...map].filter(([userId]) => fleetUser(userId)).reduce((total, [, n]) => total + n, 0);
    const rotated = sum(counts.rotated);
    const refused = sum(counts.refused);
    const notOnce = Array.from({ length: users }, (_, i) => (counts.rotated.get(`user_${i}`) ?? 0) + (counts.refused.get(`user_${i}`) ?? 0)).filter((n) => n !== 1).length;
    const unfinished = results.reduce((total, r) => total + r.unfinished, 0);
    const failed = results.reduce((total, r) => total + Object.values(r.failed).reduce((a, b) => a + b, 0), 0) + unfinished;
    const statementsPerUser = results.reduce((total, r) => total + (r.statements ?? NaN), 0) / users;
    const verdicts: Verdict[] = [
      { target: 'exactly 1 refresh per user, all processes together', measured: `${((rotated + refused) / users).toFixed(3)} per user; ${fmt.int(notOnce)} users not exactly once`, met: notOnce === 0 },
      { target: '0 lost rotations (refreshes refused: a rotated-out refresh token sent)', measured: fmt.int(refused), met: refused === 0 },
      { target: '0 failed calls', measured: fmt.int(failed), met: failed === 0 },
      { target: '≤ 12 SQL statements per user (all processes)', measured: statementsPerUser.toFixed(2), met: unfinished > 0 ? undefined : statementsPerUser <= 12 },
    ];
    return {
      title: `Fleet: ${fmt.int(users)} users × ${results.length} worker processes on one PostgreSQL, every token expired`,
      method:
        `As the Redis fleet above, with \`PostgresTokenStore\` (one node-postgres pool of 10 connections per worker) on one PostgreSQL ` +
        `server started for the run (initdb in a temp folder, fsync off). Statements: every \`pool.query\` of the workers' stores from \`go\` on.`,
      unit: 'value',
      rows: [
        { name: 'refreshes per user', value: ((rotated + refused) / users).toFixed(3), note: `${fmt.int(rotated + refused)} refresh requests; ${fmt.int(notOnce)} users not exactly once` },
        { name: 'lost rotations (refreshes refused)', value: fmt.int(refused) },
        { name: 'failed calls', value: fmt.int(failed), note: `of ${fmt.int(users * results.length)}${unfinished > 0 ? `; ${fmt.int(unfinished)} not done by the deadline` : ''}` },
        { name: 'SQL statements per user', value: statementsPerUser.toFixed(2) },
        { name: 'wall time', value: `${(wallMs / 1000).toFixed(1)} s`, note: `${fmt.int((users * results.length) / (wallMs / 1000))} calls/s` },
        { name: 'heap per cached user, PostgresTokenStore', value: fmt.kb(median(results.map((r) => r.heapPerUser).filter((b) => !Number.isNaN(b)))) },
      ],
      target: verdicts.map((v) => v.target).join('; '),
      met: verdicts.every((v) => v.met === true) ? true : verdicts.some((v) => v.met === false) ? false : undefined,
      verdicts,
      notes: [`${os.cpus().length} cores shared by the ${results.length} workers, PostgreSQL and the fake service (this process).`],
    };
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await pool.end();
    await service.close();
    await fake.close();
    await server.stop();
  }
}

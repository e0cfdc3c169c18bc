/**
 * The retry budget across a fleet: 4 processes, each a `PostSched` with one `RedisRateLimiter`, against a loopback
 * service. While it answers 503 (`Retry-After: 0`) to every call, retries add at most 10 % to the requests sent,
 * the 10 retries of the one budget the processes share in Redis;
 * once it answers again, 30 successful calls per process bring back full retries (a call answered 503 twice then
 * 200 succeeds, 3 requests). Counted: requests the service received, never time.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InternalServerError, PostSched } from '@postsched/sdk';
import { RedisRateLimiter } from '@postsched/sdk/redis';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { startWorkerFile, type Worker } from './multi-process/fleet.js';

const WORKER = fileURLToPath(new URL('./fleet/retry-budget-worker.ts', import.meta.url));
type Message = { type: 'ready' } | { type: 'done'; ok: number; failed: number };

let redis: RedisServer;
let server: Server;
const state = { down: true, requests: 0, flaky: new Map<string, number>() };
beforeAll(async () => {
  redis = await startRedisServer();
  server = createServer((req, res) => {
    state.requests++;
    const id = req.url?.split('/').pop() ?? '';
    const flaky = state.flaky.get(id) ?? 0;
    if (flaky > 0) state.flaky.set(id, flaky - 1);
    if (state.down || flaky > 0) {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"error":{"message":"down"}}');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id, account_ids: ['acc_1'] }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await redis?.stop();
});

it('4 processes in a full outage: retries add ≤ 10 % to the requests; after 30 successes each, full retries again', { timeout: 180_000 }, async () => {
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const workers: Worker<Message, { type: 'run'; ids: string[] } | { type: 'exit' }>[] = [];
  for (let w = 0; w < 4; w++) workers.push(startWorkerFile(WORKER, { baseUrl, redisUrl: redis.url, prefix: 'budget-fleet' }));
  try {
    await Promise.all(workers.map((w) => w.next('ready')));
    const run = async (ids: (w: number) => string[]) => {
      workers.forEach((worker, w) => worker.send({ type: 'run', ids: ids(w) }));
      return Promise.all(workers.map((w) => w.next('done')));
    };

    // The outage: 4 × 100 calls, every one answered 503.
    const down = await run((w) => Array.from({ length: 100 }, (_, i) => `post_${w}_${i}`));
    const outage = state.requests;
    console.log(`retry-budget fleet: outage ${JSON.stringify({ calls: 400, requests: outage, retries: outage - 400 })}`);
    expect(down.reduce((n, d) => n + (d.type === 'done' ? d.failed : 0), 0)).toBe(400);
    expect(outage - 400).toBeLessThanOrEqual(40);
    // One budget for the fleet, in Redis: its 10 retries in all (a budget per process would give 4 × 10).
    expect(outage - 400).toBe(10);

    // Recovered: 30 successful calls per process, then each process's call answered 503 twice gets its 2 retries.
    state.down = false;
    await run((w) => Array.from({ length: 30 }, (_, i) => `ok_${w}_${i}`));
    for (let w = 0; w < 4; w++) state.flaky.set(`flaky_${w}`, 2);
    const before = state.requests;
    const back = await run((w) => [`flaky_${w}`]);
    expect(back.map((d) => (d.type === 'done' ? d.ok : -1))).toEqual([1, 1, 1, 1]);
    expect(state.requests - before).toBe(4 * 3);
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
});

it("after the outage, one process's successes refill the budget of all: a process with few calls gets its retries back", { timeout: 120_000 }, async () => {
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const [busy, quiet] = [0, 1].map(() => startWorkerFile<Message, { type: 'run'; ids: string[] } | { type: 'exit' }>(WORKER, { baseUrl, redisUrl: redis.url, prefix: 'budget-recovery' }));
  try {
    await Promise.all([busy!.next('ready'), quiet!.next('ready')]);
    const run = async (worker: typeof busy, ids: string[]) => {
      worker!.send({ type: 'run', ids });
      return worker!.next('done');
    };
    // The outage empties the shared budget; both processes are refused retries.
    state.down = true;
    await run(busy, Array.from({ length: 20 }, (_, i) => `busy_down_${i}`));
    let before = state.requests;
    await run(quiet, ['quiet_down_1', 'quiet_down_2']);
    expect(state.requests - before).toBe(2);

    // Recovered: the busy process's 200 successes, none of the quiet one's; then the quiet one's call answered 503
    // twice gets its 2 retries.
    state.down = false;
    await run(busy, Array.from({ length: 200 }, (_, i) => `busy_ok_${i}`));
    state.flaky.set('quiet_flaky', 2);
    before = state.requests;
    expect(await run(quiet, ['quiet_flaky'])).toMatchObject({ ok: 1 });
    expect(state.requests - before).toBe(3);
  } finally {
    await Promise.all([busy?.stop(), quiet?.stop()]);
  }
});

it('Redis unreachable: the budget fails open to the process\'s own (10 retries, then none), never a failed call because of Redis', { timeout: 60_000 }, async () => {
  state.down = true;
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const unreachable = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  unreachable.on('error', () => {});
  const rateLimiter = new RedisRateLimiter({ redis: unreachable, commandTimeoutMs: 200 });
  const client = new PostSched({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, auth: 'tok_fleet', rateLimiter });
  const before = state.requests;
  for (let i = 0; i < 30; i++) await expect(client.posts.get(`alone_${i}`)).rejects.toBeInstanceOf(InternalServerError);
  expect(state.requests - before).toBe(30 + 10);
  await rateLimiter.close();
  unreachable.disconnect();
});

/**
 * Webhooks for a fleet, end to end, on each shared store: 4 receiver processes (`webhooks.node` on node:http), with
 * RedisWebhookDedupe on a real redis-server (two on ioredis, two on node-redis), then with PostgresWebhookDedupe on
 * a real PostgreSQL server, the sender picking them in turn; and the Fetch adapter
 * in one process with the in-memory store. The same 1,000 signed events are each delivered 3 times in shuffled
 * order, 50 at a time, 10% of the handlers fail on their first run, and the sender re-delivers on any answer but
 * 2xx. Counted: each event's handler succeeded exactly once, no event lost, no delivery unanswered.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookDedupeTable } from '@postsched/sdk/postgres';
import { createWebhookHandler } from '@postsched/sdk/webhooks';
import { startPostgresServer } from '../postgres/postgres-server.js';
import { startWorkerFile, type Worker } from '../redis/multi-process/fleet.js';
import { startRedisServer } from '../redis/redis-server.js';
import type { ReceiverConfig, ReceiverMessage } from './fleet/receiver.js';
import { deliverAll, postIdOf, publishedEvents } from './fleet/sender.js';

const RECEIVER = new URL('./fleet/receiver.ts', import.meta.url).pathname;
const SECRET = 'whsec_fleet_7c1e';
const EVENTS = publishedEvents(1_000);
const FAILING = EVENTS.map(postIdOf).filter((id) => id.endsWith('7')); // 10%: fail on their first run

/** How many times each post's handler succeeded, from the receivers' `succeeded` messages. */
function successCounter() {
  const counts = new Map<string, number>();
  const listen = (worker: Worker<ReceiverMessage, { type: 'exit' }>) =>
    worker.child.on('message', (message: ReceiverMessage) => {
      if (message.type === 'succeeded') counts.set(message.id, (counts.get(message.id) ?? 0) + 1);
    });
  return { counts, listen };
}

/** Posts whose handler did not succeed exactly once: `{ post_3: 0, post_9: 2 }`; `{}` when all did. */
function notExactlyOnce(counts: Map<string, number>): Record<string, number> {
  return Object.fromEntries(EVENTS.map(postIdOf).flatMap((id) => (counts.get(id) === 1 ? [] : [[id, counts.get(id) ?? 0]])));
}

async function post(url: string, body: string, signature: string): Promise<number> {
  const response = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signature } });
  await response.arrayBuffer();
  return response.status;
}

/** A store's server for the fleet: its receivers' clients, and what a fault mid-run does to it. */
interface StoreKind {
  name: string;
  clients: ReceiverConfig['client'][];
  start(): Promise<{ url: string; stop(): Promise<void> }>;
  /** Makes what a receiver set needs (the PostgreSQL tables) before it starts. */
  prepare(url: string, prefix: string): Promise<void>;
  /** The fault of the "mid-run" test: Redis loses its data (FLUSHALL), PostgreSQL restarts. */
  fault: { name: string; run(server: { url: string; restart?: (mode: 'fast') => Promise<void> }): Promise<void> };
}

const STORES: StoreKind[] = [
  {
    name: 'RedisWebhookDedupe',
    clients: ['ioredis', 'node-redis'],
    start: startRedisServer,
    prepare: async () => {},
    fault: {
      name: 'Redis loses its data (FLUSHALL)',
      run: async ({ url }) => {
        const { Redis } = await import('ioredis');
        const admin = new Redis(url);
        try {
          await admin.call('FLUSHALL');
        } finally {
          admin.disconnect();
        }
      },
    },
  },
  {
    name: 'PostgresWebhookDedupe',
    clients: ['pg'],
    start: startPostgresServer,
    prepare: async (url, table) => {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        await createWebhookDedupeTable(pool, { table });
        await pool.query(`CREATE TABLE "${table}_runs" (id text PRIMARY KEY, n integer NOT NULL)`);
      } finally {
        await pool.end();
      }
    },
    fault: { name: 'PostgreSQL restarts (pg_ctl restart -m fast)', run: (server) => server.restart!('fast') },
  },
];

describe.each(STORES)('a fleet of 4 receiver processes sharing $name', (store) => {
  let server: { url: string; stop(): Promise<void>; restart?: (mode: 'fast') => Promise<void> };
  const workers: Worker<ReceiverMessage, { type: 'exit' }>[] = [];
  beforeAll(async () => {
    server = await store.start();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop()));
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function start(count: number, config: Partial<ReceiverConfig> & { prefix: string }): Promise<{ urls: string[]; fleet: Worker<ReceiverMessage, { type: 'exit' }>[] }> {
    if (!prepared.has(config.prefix)) await store.prepare(server.url, config.prefix);
    prepared.add(config.prefix);
    const fleet = Array.from({ length: count }, (_, i) =>
      startWorkerFile<ReceiverMessage, { type: 'exit' }>(RECEIVER, {
        client: store.clients[i % store.clients.length]!,
        url: server.url,
        secret: SECRET,
        ...config,
      } satisfies ReceiverConfig),
    );
    workers.push(...fleet);
    const ready = await Promise.all(fleet.map((worker) => worker.next('ready')));
    return { urls: ready.map(({ port }) => `http://127.0.0.1:${port}/webhooks`), fleet };
  }
  const prepared = new Set<string>();
  /** A key prefix, or a PostgreSQL table name: letters, digits and underscores. */
  const prefixOf = (name: string) => `${name}_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;

  it('handles each of 1,000 events exactly once: 3 shuffled copies, 50 at a time, 10% failing first', { timeout: 180_000 }, async () => {
    const { urls, fleet } = await start(4, { prefix: prefixOf('fleet'), failFirstRunDigit: '7' });
    const { counts, listen } = successCounter();
    fleet.forEach(listen);
    let turn = 0;
    const stats = await deliverAll(EVENTS, {
      secret: SECRET,
      copies: 3,
      concurrency: 50,
      seed: 21,
      post: (body, signature) => post(urls[turn++ % urls.length]!, body, signature),
    });

    expect(stats.lost).toBe(0);
    expect(stats.unanswered).toBe(0);
    expect(notExactlyOnce(counts)).toEqual({});
    expect(stats.statuses[500]).toBe(FAILING.length); // each failing first run was answered 500, then retried
    expect(stats.statuses[503]).toBeGreaterThan(0); // copies met runs in flight on other receivers (252 in one run)
    expect(Object.keys(stats.statuses).sort()).toEqual(['204', '500', '503']);
  });

  it(`loses no event and leaves no delivery unanswered when ${store.fault.name} mid-run`, { timeout: 180_000 }, async () => {
    const prefix = prefixOf('fault');
    // A claim that landed just before the fault, its answer lost, blocks its event for inFlightTtlMs: short here.
    const bounds = { handlerTimeoutMs: 1_000, dedupeTimeoutMs: 1_000, inFlightTtlMs: 4_000 };
    const { urls, fleet } = await start(4, { prefix, failFirstRunDigit: '7', bounds });
    const { counts, listen } = successCounter();
    fleet.forEach(listen);
    const pending = new Map<string, number>();
    let faulted = false;
    let faulting = false;
    /** What the sender could know at the fault: events already handled, and events with a delivery in flight or sent while it lasts. */
    const knownAtFault = new Set<string>();
    let turn = 0;
    let answers = 0;
    const stats = await deliverAll(EVENTS, {
      secret: SECRET,
      copies: 3,
      concurrency: 50,
      seed: 7,
      maxAttempts: 2_000,
      onAttempt: (body, phase) => {
        pending.set(body, (pending.get(body) ?? 0) + (phase === 'sent' ? 1 : -1));
        if (faulting) knownAtFault.add(postIdOf(body)); // sent while the fault goes on
      },
      post: async (body, signature) => {
        const status = await post(urls[turn++ % urls.length]!, body, signature);
        if (++answers === 1_500 && !faulted) {
          faulting = true;
          for (const [id, n] of counts) if (n > 0) knownAtFault.add(id);
          for (const [pendingBody, n] of pending) if (n > 0) knownAtFault.add(postIdOf(pendingBody));
          await store.fault.run(server);
          faulting = false;
          faulted = true;
        }
        return status;
      },
    });
    expect(faulted).toBe(true);
    expect(stats.lost).toBe(0);
    expect(stats.unanswered).toBe(0);
    const missing = EVENTS.map(postIdOf).filter((id) => (counts.get(id) ?? 0) === 0);
    expect(missing).toEqual([]);
    // Only an event the store forgot, or whose done mark the fault cut off (handled or in flight then), may run twice.
    const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    expect(twice.filter((id) => !knownAtFault.has(id))).toEqual([]);
  });

  it('runs the event on another receiver once the claim of a receiver killed mid-handler expires', { timeout: 120_000 }, async () => {
    const bounds = { handlerTimeoutMs: 1_000, dedupeTimeoutMs: 400, inFlightTtlMs: 3_000 };
    const prefix = prefixOf('kill');
    const body = EVENTS[42]!;
    const {
      urls: [victimUrl],
      fleet: [victim],
    } = await start(1, { prefix, bounds, hangOn: 'post_42' });
    const {
      urls: [survivorUrl],
      fleet: [survivor],
    } = await start(1, { prefix, bounds });
    const { counts, listen } = successCounter();
    listen(survivor!);

    const { signWebhook } = await import('@postsched/sdk/webhooks');
    const first = post(victimUrl!, body, await signWebhook({ body, secret: SECRET })).catch(() => 'unanswered' as const);
    await victim!.next('holding'); // its claim is in Redis, its handler will never finish
    await victim!.kill();
    expect(await first).toBe('unanswered'); // SIGKILL: the service gets no answer and retries

    const statuses: number[] = [];
    while (statuses.at(-1) !== 204 && statuses.length < 500) {
      statuses.push(await post(survivorUrl!, body, await signWebhook({ body, secret: SECRET })));
      if (statuses.at(-1) !== 204) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(statuses.at(-1)).toBe(204);
    expect(statuses.slice(0, -1).every((status) => status === 503)).toBe(true); // in flight until the claim expired
    expect(statuses.length).toBeGreaterThan(1);
    expect(counts.get('post_42')).toBe(1);
  });
});

describe('the Fetch adapter in one process, with the in-memory store', () => {
  it('handles each of 1,000 events exactly once: 3 shuffled copies, 50 at a time, 10% failing first', { timeout: 120_000 }, async () => {
    const runs = new Map<string, number>();
    const succeeded = new Map<string, number>();
    const webhooks = createWebhookHandler({
      secret: SECRET,
      onError: () => {},
      on: {
        'post.published': async (event) => {
          const id = event.data.id;
          const run = (runs.get(id) ?? 0) + 1;
          runs.set(id, run);
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
          if (run === 1 && id.endsWith('7')) {
            await new Promise((resolve) => setTimeout(resolve, 30)); // a downstream call that times out
            throw new Error('first run fails');
          }
          succeeded.set(id, (succeeded.get(id) ?? 0) + 1);
        },
      },
    });
    const stats = await deliverAll(EVENTS, {
      secret: SECRET,
      copies: 3,
      concurrency: 50,
      seed: 14,
      post: async (body, signature) => {
        const request = new Request('https://app.example/webhooks', { method: 'POST', body, headers: { 'x-service-signature': signature } });
        return (await webhooks.fetch(request)).status;
      },
    });
    expect(stats.lost).toBe(0);
    expect(stats.unanswered).toBe(0);
    expect(notExactlyOnce(succeeded)).toEqual({});
    expect(stats.statuses[500]).toBe(FAILING.length);
  });
});

/**
 * Webhooks for a fleet, end to end: 4 receiver processes (`webhooks.node` on node:http, RedisWebhookDedupe on a
 * real redis-server, two on ioredis and two on node-redis), the sender picking them in turn; and the Fetch adapter
 * in one process with the in-memory store. The same 1,000 signed events are each delivered 3 times in shuffled
 * order, 50 at a time, 10% of the handlers fail on their first run, and the sender re-delivers on any answer but
 * 2xx. Counted: each event's handler succeeded exactly once, no event lost, no delivery unanswered.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookHandler } from '@postsched/sdk/webhooks';
import { startWorkerFile, type Worker } from '../redis/multi-process/fleet.js';
import { type RedisServer, startRedisServer } from '../redis/redis-server.js';
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

describe('a fleet of 4 receiver processes sharing RedisWebhookDedupe', () => {
  let server: RedisServer;
  const workers: Worker<ReceiverMessage, { type: 'exit' }>[] = [];
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop()));
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function start(count: number, config: Partial<ReceiverConfig> & { prefix: string }): Promise<{ urls: string[]; fleet: Worker<ReceiverMessage, { type: 'exit' }>[] }> {
    const fleet = Array.from({ length: count }, (_, i) =>
      startWorkerFile<ReceiverMessage, { type: 'exit' }>(RECEIVER, {
        client: i % 2 === 0 ? 'ioredis' : 'node-redis',
        redisUrl: server.url,
        secret: SECRET,
        ...config,
      } satisfies ReceiverConfig),
    );
    workers.push(...fleet);
    const ready = await Promise.all(fleet.map((worker) => worker.next('ready')));
    return { urls: ready.map(({ port }) => `http://127.0.0.1:${port}/webhooks`), fleet };
  }

  it('handles each of 1,000 events exactly once: 3 shuffled copies, 50 at a time, 10% failing first', { timeout: 180_000 }, async () => {
    const { urls, fleet } = await start(4, { prefix: `fleet:${crypto.randomUUID()}`, failFirstRunDigit: '7' });
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

  it('loses no event and leaves no delivery unanswered when Redis loses its data (FLUSHALL) mid-run', { timeout: 180_000 }, async () => {
    const prefix = `flush:${crypto.randomUUID()}`;
    const { urls, fleet } = await start(4, { prefix, failFirstRunDigit: '7' });
    const { counts, listen } = successCounter();
    fleet.forEach(listen);
    const pending = new Map<string, number>();
    let flushed = false;
    /** What the sender could know at the flush: events already handled, and events with a delivery in flight. */
    const knownAtFlush = new Set<string>();
    const admin = await import('ioredis').then(({ Redis }) => new Redis(server.url));
    let turn = 0;
    let answers = 0;
    try {
      const stats = await deliverAll(EVENTS, {
        secret: SECRET,
        copies: 3,
        concurrency: 50,
        seed: 7,
        onAttempt: (body, phase) => pending.set(body, (pending.get(body) ?? 0) + (phase === 'sent' ? 1 : -1)),
        post: async (body, signature) => {
          const status = await post(urls[turn++ % urls.length]!, body, signature);
          if (++answers === 1_500 && !flushed) {
            for (const [id, n] of counts) if (n > 0) knownAtFlush.add(id);
            for (const [pendingBody, n] of pending) if (n > 0) knownAtFlush.add(postIdOf(pendingBody));
            await admin.call('FLUSHALL');
            flushed = true;
          }
          return status;
        },
      });
      expect(flushed).toBe(true);
      expect(stats.lost).toBe(0);
      expect(stats.unanswered).toBe(0);
      const missing = EVENTS.map(postIdOf).filter((id) => (counts.get(id) ?? 0) === 0);
      expect(missing).toEqual([]);
      // Only an event the store forgot (handled or in flight when its data went) may run twice.
      const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
      expect(twice.filter((id) => !knownAtFlush.has(id))).toEqual([]);
    } finally {
      admin.disconnect();
    }
  });

  it('runs the event on another receiver once the claim of a receiver killed mid-handler expires', { timeout: 120_000 }, async () => {
    const bounds = { handlerTimeoutMs: 1_000, dedupeTimeoutMs: 400, inFlightTtlMs: 3_000 };
    const prefix = `kill:${crypto.randomUUID()}`;
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

/**
 * Events handled per second by `createWebhookHandler` with `RedisWebhookDedupe` (issue 21), against its floor: what
 * any receiver that deduplicates through Redis must do, `verifyWebhook` alone plus one `SET key 1 PX ttl NX` to the
 * same Redis. Target ≥ 0.9x. The bench starts its own redis-server (REDIS_SERVER_BIN, else /usr/bin/redis-server)
 * on loopback; both sides share one ioredis client.
 *
 * Each delivery is a new event (a new post id), so every claim is taken: the common case. The handler's own work
 * is nothing (`() => {}`), so only the SDK's cost shows: verify, claim (one Lua script), run, complete (one Lua
 * script), answer through `.node` with the body already read (as Express's `express.raw()` leaves it).
 */
import { createHmac } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisWebhookDedupe } from '../../src/redis/index.js';
import * as node from '../../src/webhooks/node.js';
import { startRedisProcess } from '../../test/support/redis-process.js';
import { fmt, ratioVerdict, type Row, type Section } from '../lib/report.js';

const secret = 'whsec_bench_handler_5e2a';
/** A busy receiver: enough deliveries in flight that the CPU, not the loopback round trip, sets the pace. */
const CONCURRENCY = 64;

interface Delivery {
  readonly id: string;
  readonly body: string;
  readonly signature: string;
}

/** `count` signed post.published deliveries of new posts, signed now (inside the 300 s tolerance). */
function deliveries(count: number, tag: string): Delivery[] {
  const t = Math.floor(Date.now() / 1000);
  return Array.from({ length: count }, (_, i) => {
    const id = `post_${tag}_${i}`;
    const at = new Date(Date.UTC(2024, 4, 1, 12) + i).toISOString();
    const body = JSON.stringify({ event: 'post.published', created_at: at, data: { id, account_ids: ['acc_1', 'acc_2'], published_at: at } });
    return { id, body, signature: `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}` };
  });
}

/** Events per second of `handle` over `inputs`, `CONCURRENCY` at a time. */
async function eventsPerSecond(inputs: Delivery[], handle: (delivery: Delivery) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < inputs.length; i = next++) await handle(inputs[i]!);
    }),
  );
  return inputs.length / ((performance.now() - started) / 1000);
}

const NAMES = {
  floor: 'floor: verifyWebhook + one SET NX PX (same Redis)',
  redis: 'ours: createWebhookHandler, RedisWebhookDedupe',
  memory: 'ours: createWebhookHandler, in-memory store (default)',
  verify: 'verifyWebhook alone (no store)',
} as const;
type Key = keyof typeof NAMES;

export async function measureWebhookHandler({ quick }: { quick: boolean }): Promise<Section> {
  const server = await startRedisProcess(process.env['REDIS_SERVER_BIN'] ?? '/usr/bin/redis-server');
  const redis = new Redis(server.url);
  try {
    const answered = { statusCode: 0 };
    const res = { statusCode: 0, setHeader: () => {}, end: () => void (answered.statusCode = res.statusCode) };
    const handler = (dedupe: ConstructorParameters<typeof RedisWebhookDedupe>[0] | 'memory') =>
      node.createWebhookHandler({ secret, dedupe: dedupe === 'memory' ? undefined : new RedisWebhookDedupe(dedupe), on: { 'post.published': () => {} } });
    const ours = { redis: handler({ redis, prefix: 'bench:handler' }), memory: handler('memory') };
    const viaNode = (webhooks: node.WebhookHandler) => async ({ body, signature }: Delivery) => {
      await webhooks.node({ method: 'POST', headers: { 'x-service-signature': signature }, body }, res);
      if (answered.statusCode !== 204) throw new Error(`the handler answered ${answered.statusCode}`);
    };
    const contenders: Record<Key, (delivery: Delivery) => Promise<void>> = {
      floor: async ({ id, body, signature }) => {
        await node.verifyWebhook({ body, signature, secret });
        if ((await redis.call('SET', `bench:floor:${id}`, '1', 'PX', '600000', 'NX')) !== 'OK') throw new Error('SET NX refused');
      },
      redis: viaNode(ours.redis),
      memory: viaNode(ours.memory),
      verify: async ({ body, signature }) => void (await node.verifyWebhook({ body, signature, secret })),
    };
    const keys = Object.keys(contenders) as Key[];
    const rounds = quick ? 3 : 7;
    const perRound = quick ? 2_000 : 6_000;
    for (const key of keys) await eventsPerSecond(deliveries(500, `warm_${key}`), contenders[key]); // JIT, scripts cached
    // Interleaved rounds, best of each: a load spike slows one round of everyone, not one contender's figure.
    const best = Object.fromEntries(keys.map((key) => [key, 0])) as Record<Key, number>;
    for (let round = 0; round < rounds; round++) {
      for (const key of keys) {
        const rate = await eventsPerSecond(deliveries(perRound, `${key}_${round}`), contenders[key]);
        best[key] = Math.max(best[key], rate);
      }
    }
    const ratio = (key: Key) => best[key] / best.floor;
    const rows: Row[] = keys.map((key) => ({
      name: NAMES[key],
      value: fmt.int(best[key]),
      ...(key === 'floor' ? {} : { ratio: fmt.x(ratio(key)) }),
      note: `${(1e6 / best[key]).toFixed(1)} µs/event`,
    }));
    const verdict = ratioVerdict('createWebhookHandler with RedisWebhookDedupe ≥ 0.9x verifyWebhook + one SET NX', ratio('redis'), 0.9, '≥');
    return {
      title: 'Webhook verification and handling, with the Redis store',
      method:
        `Events per second through createWebhookHandler's .node adapter (body already read), ${CONCURRENCY} deliveries in ` +
        `flight, each a new event; best of ${rounds} interleaved rounds of ${perRound} events. The floor verifies and sends ` +
        'one SET NX PX on the same ioredis client to the same loopback redis-server (started by the bench). Ratio: ÷ the floor.',
      unit: 'events/s',
      rows,
      target: verdict.target,
      met: verdict.met,
      verdicts: [verdict],
      notes: [
        'Ours makes two steps per event where the floor makes one SET: the claim (taken, in flight or done, the post\'s ' +
          'newest created_at read in the same script) and, once the handler finished, the done mark. Both are needed: a ' +
          'claim that is its own done mark is what loses an event whose first run fails while a duplicate is answered 2xx. ' +
          'Calls made while a script of their kind is in flight go together in the next one. The receiver process is the ' +
          'limit, not Redis (mostly idle): about 70 µs of its CPU per event against 24 µs for the floor (a V8 profile of ' +
          '30,000 events: ioredis building and writing the two scripts\' keys and arguments, garbage collection, and the ' +
          'handler\'s bookkeeping per event: claim id, `created_at` as an instant, two time-bound timers; no single cost ' +
          'dominates).',
      ],
    };
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

/**
 * RedisWebhookDedupe against a real redis-server (ioredis and node-redis) and a real 3-master Redis Cluster
 * (ioredis Cluster): the store contract of test/webhooks/dedupe-contract.ts (each transition, its expiry, the newest
 * created_at per post, atomic claims, a hung handler; PostgresWebhookDedupe runs it too), the keys' hash tags, and
 * what the webhook handler answers when Redis fails, hangs or loses its data.
 */
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ValidationError } from '@postsched/sdk';
import { RedisWebhookDedupe, WebhookDedupeUnavailableError, type RedisClientLike } from '@postsched/sdk/redis';
import { createWebhookHandler, signWebhook } from '@postsched/sdk/webhooks';
import { context, hungHandler, transitions as storeTransitions, signed, SECRET } from '../webhooks/dedupe-contract.js';
import { type RedisCluster, startRedisCluster } from './redis-server.js';
import { CLIENT_KINDS, type TestClient } from './redis-clients.js';
import { type RedisServer, startRedisServer } from './redis-server.js';

/** What Redis Cluster hashes of a key: the text between the first `{` and the next `}` when not empty, else all. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

/** The store's behaviour, the same on every client; `prefix` keeps the runs apart on one server. */
function transitions(connect: () => Promise<{ client: RedisClientLike; close(): Promise<void> | void }>) {
  let client: RedisClientLike;
  let close: () => Promise<void> | void;
  beforeAll(async () => ({ client, close } = await connect()));
  afterAll(async () => {
    await close?.();
  });
  // test/webhooks/dedupe-contract.ts: the same on every store (PostgresWebhookDedupe too).
  storeTransitions(async (options = {}) => new RedisWebhookDedupe({ redis: client, prefix: `t:${crypto.randomUUID()}`, ...options }), { ordered: true });
}

describe.each(CLIENT_KINDS)('RedisWebhookDedupe ($name)', (kind) => {
  let test: TestClient;
  transitions(async () => {
    test = await kind.connect(server.url);
    return { client: test.client, close: () => test.close() };
  });

  it('keeps each post’s keys in one hash tag, whatever its id holds', async () => {
    const prefix = `tags:${crypto.randomUUID()}`;
    const dedupe = new RedisWebhookDedupe({ redis: test.client, prefix });
    for (const postId of ['post_1', '', '}', '{x}', 'a}b{c']) {
      const key = JSON.stringify(['post.published', postId, '2024-05-01T12:00:00Z']);
      await dedupe.claim(key, context('a', 5, postId));
      await dedupe.complete(key, context('a', 5, postId));
      const eventKey = `${prefix}:{post:${postId}}:${key}`;
      const newestKey = `${prefix}:{post:${postId}}:newest`;
      expect(await test.raw('GET', eventKey)).toBe('done');
      expect(await test.raw('GET', newestKey)).toBe('5');
      expect(hashTag(eventKey)).toBe(hashTag(newestKey));
    }
  });

  it('refuses a bad client or option with a ValidationError naming it', () => {
    expect(() => new RedisWebhookDedupe({ redis: {} as RedisClientLike })).toThrow(/`redis` must be an ioredis client/);
    expect(() => new RedisWebhookDedupe({ redis: test.client, doneTtlMs: 0 })).toThrow(/`doneTtlMs` must be an integer/);
    // Past setTimeout's ceiling the command timer would fire at once: every claim a 500.
    expect(() => new RedisWebhookDedupe({ redis: test.client, commandTimeoutMs: 2 ** 31 })).toThrow(/`commandTimeoutMs` must be an integer from 1 to 2147483647/);
    expect(() => new RedisWebhookDedupe({ redis: test.client, prefix: '' })).toThrow(/`prefix`/);
  });

  it('refuses a prefix whose hash tag is empty, which would split a post’s keys over Cluster slots', () => {
    for (const prefix of ['wh{}', '{}', 'a{}b{c}', '{}:{webhooks}']) {
      expect(() => new RedisWebhookDedupe({ redis: test.client, prefix }), prefix).toThrow(ValidationError);
      expect(() => new RedisWebhookDedupe({ redis: test.client, prefix }), prefix).toThrow(/^`prefix` is ".*": its empty hash tag `\{\}` .* Remove the `\{\}`/);
    }
    // A named tag (every key in one slot), or a `{` the post's tag closes, still keeps a post's keys together.
    for (const prefix of ['wh{webhooks}', 'wh{', 'a}{b}', 'postsched:webhook']) {
      expect(() => new RedisWebhookDedupe({ redis: test.client, prefix }), prefix).not.toThrow();
      const keys = [`${prefix}:{post:p}:["e"]`, `${prefix}:{post:p}:newest`];
      expect(hashTag(keys[0]!), prefix).toBe(hashTag(keys[1]!));
    }
  });
});

describe('RedisWebhookDedupe on a Redis Cluster (ioredis Cluster)', () => {
  let cluster: RedisCluster;
  let redis: Cluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  transitions(async () => {
    redis = new Cluster(cluster.nodes);
    return { client: redis, close: () => redis.disconnect() };
  });

  it('spreads posts over the masters, each post’s keys in one slot', async () => {
    const dedupe = new RedisWebhookDedupe({ redis, prefix: 'spread' });
    const slots = new Set<number>();
    for (let i = 0; i < 30; i++) {
      const postId = `post_${i}`;
      const key = JSON.stringify(['post.published', postId, 'c']);
      expect(await dedupe.claim(key, context('a', 1, postId))).toEqual({ state: 'new' });
      await dedupe.complete(key, context('a', 1, postId));
      const [eventSlot, newestSlot] = await Promise.all(
        [`spread:{post:${postId}}:${key}`, `spread:{post:${postId}}:newest`].map((k) => redis.call('CLUSTER', 'KEYSLOT', k) as Promise<number>),
      );
      expect(eventSlot).toBe(newestSlot);
      slots.add(Math.floor(eventSlot! / 5461));
    }
    expect(slots.size).toBe(3); // every master holds some
  });
});

/** A handler on a fresh RedisWebhookDedupe (its own prefix) over one of the test server's clients. */
describe('createWebhookHandler with RedisWebhookDedupe', () => {
  let test: TestClient;
  beforeAll(async () => {
    test = await CLIENT_KINDS[0]!.connect(server.url);
  });
  afterAll(async () => {
    await test?.close();
  });
  const dedupe = (name: string) => new RedisWebhookDedupe({ redis: test.client, prefix: `${name}:${crypto.randomUUID()}` });
  it('orders by no created_at later than the signature’s timestamp plus the tolerance: the post’s real events are not stale after it', async () => {
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    const seen: string[] = [];
    const record = (event: { created_at: string }, { stale }: { stale: boolean }) => void seen.push(`${event.created_at}${stale ? ' stale' : ''}`);
    const webhooks = createWebhookHandler({ secret: SECRET, dedupe: dedupe('future'), on: { 'post.failed': record, 'post.scheduled': record } });
    const futures = ['9999-12-31T23:59:59Z', '2030-01-01T00:00:00Z', iso(now + 30 * 86_400_000), iso(now + 3_600_000)];
    for (const [i, future] of futures.entries()) {
      expect((await webhooks.fetch(await signed('post.failed', future, `post_${i}`))).status).toBe(204);
      expect((await webhooks.fetch(await signed('post.scheduled', iso(now - 1_000), `post_${i}`))).status).toBe(204);
    }
    expect(seen.filter((line) => line.endsWith('stale'))).toEqual([]);
    // A created_at within the bound still orders the post.
    await webhooks.fetch(await signed('post.failed', iso(now), 'post_real'));
    await webhooks.fetch(await signed('post.scheduled', iso(now - 1_000), 'post_real'));
    expect(seen.at(-1)).toBe(`${iso(now - 1_000)} stale`);
  });

  hungHandler(async () => dedupe('hung'));
});

describe('createWebhookHandler with RedisWebhookDedupe when Redis fails', () => {
  const body = JSON.stringify({
    event: 'post.published',
    created_at: '2024-05-01T12:05:00Z',
    data: { id: 'post_1', account_ids: ['acc_1'], published_at: '2024-05-01T12:05:00Z' },
  });
  async function delivery(): Promise<Request> {
    return new Request('http://127.0.0.1/webhooks', { method: 'POST', body, headers: { 'x-service-signature': await signWebhook({ body, secret: SECRET }) } });
  }
  /** A handler counting its successes, on `redis` (`commandTimeoutMs` short, so a dead Redis fails fast). */
  function counting(redis: RedisClientLike, prefix: string, onError: (error: unknown) => void = () => {}) {
    const counted = { succeeded: 0 };
    const webhooks = createWebhookHandler({
      handlerTimeoutMs: 200,
      dedupeTimeoutMs: 1_000,
      inFlightTtlMs: 5_000,
      secret: SECRET,
      dedupe: new RedisWebhookDedupe({ redis, prefix, commandTimeoutMs: 150 }),
      onError,
      on: { 'post.published': () => void counted.succeeded++ },
    });
    return { webhooks, counted };
  }

  it.each(CLIENT_KINDS)('answers 500 and runs nothing while Redis hangs (CLIENT PAUSE), then runs the retry ($name)', async (kind) => {
    const test = await kind.connect(server.url);
    const admin = await kind.connect(server.url);
    try {
      const onError = vi.fn();
      const { webhooks, counted } = counting(test.client, `pause:${crypto.randomUUID()}`, onError);
      await admin.raw('CLIENT', 'PAUSE', '600', 'ALL');
      const answer = await webhooks.fetch(await delivery());
      expect(answer.status).toBe(500);
      expect(counted.succeeded).toBe(0);
      const [error] = onError.mock.calls[0]!;
      expect(error).toBeInstanceOf(WebhookDedupeUnavailableError);
      expect(error).toMatchObject({ code: 'redis_timeout', operation: 'claim', timeoutMs: 150 });
      expect(String((error as Error).message)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/); // no claim id
      // Once Redis answers again, the claim that landed late was given back: the retry runs at once.
      await vi.waitFor(async () => expect((await webhooks.fetch(await delivery())).status).toBe(204), { timeout: 5_000, interval: 100 });
      expect(counted.succeeded).toBe(1);
    } finally {
      await test.close();
      await admin.close();
    }
  });

  it('answers 500 with a typed error, never 2xx, while Redis is down', async () => {
    const own = await startRedisServer();
    const redis = new Redis(own.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    try {
      const onError = vi.fn();
      const { webhooks, counted } = counting(redis, 'down', onError);
      await own.stop();
      for (let i = 0; i < 3; i++) expect((await webhooks.fetch(await delivery())).status).toBe(500);
      expect(counted.succeeded).toBe(0);
      expect(onError.mock.calls.every(([error]) => error instanceof WebhookDedupeUnavailableError)).toBe(true);
    } finally {
      redis.disconnect();
    }
  });

  it.each(['the handler succeeds', 'the handler fails once'] as const)(
    'loses no event when Redis loses its data (FLUSHALL) mid-handler: %s',
    async (outcome) => {
      const test = await CLIENT_KINDS[0]!.connect(server.url);
      try {
        const dedupe = new RedisWebhookDedupe({ redis: test.client, prefix: `flush:${crypto.randomUUID()}` });
        let runs = 0;
        let succeeded = 0;
        const webhooks = createWebhookHandler({
          secret: SECRET,
          dedupe,
          onError: () => {},
          on: {
            'post.published': async () => {
              runs += 1;
              await test.raw('FLUSHALL');
              if (outcome === 'the handler fails once' && runs === 1) throw new Error('queue down');
              succeeded += 1;
            },
          },
        });
        const statuses: number[] = [];
        for (let attempt = 0; attempt < 5 && statuses.at(-1) !== 204; attempt++) statuses.push((await webhooks.fetch(await delivery())).status);
        expect(statuses).toEqual(outcome === 'the handler succeeds' ? [204] : [500, 204]);
        expect(succeeded).toBe(1);
        // The done mark was written after the flush: a later duplicate is still recognized.
        expect((await webhooks.fetch(await delivery())).status).toBe(204);
        expect(runs).toBe(outcome === 'the handler succeeds' ? 1 : 2);
      } finally {
        await test.close();
      }
    },
  );
});

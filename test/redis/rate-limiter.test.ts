/**
 * RedisRateLimiter against a real redis-server (ioredis and node-redis) and a 3-master Redis Cluster (ioredis): two
 * limiters on two connections (two processes, as far as Redis can tell) share a block, a block is only ever extended,
 * a limiter that joins late learns the longer block on its own 429, and with Redis stopped the calls still complete.
 * Outcomes are counted; the only times compared are when a request reached the service against the block's end.
 */
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostSched, UserClients, ValidationError } from '@postsched/sdk';
import { RedisRateLimiter, type RedisClientLike } from '@postsched/sdk/redis';
import { windowService } from '../helpers.js';
import { CLIENT_KINDS } from './redis-clients.js';
import { type RedisCluster, type RedisServer, startRedisCluster, startRedisServer } from './redis-server.js';

const BASE = 'http://127.0.0.1:9/v1'; // never reached: every client has the test's fetch
const post = { id: 'post_1', account_ids: ['acc_1'], publish_at: '2030-01-01T09:00:00.000Z', status: 'scheduled', created_at: '2029-12-01T00:00:00.000Z' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A service answering the first request 429 with `Retry-After: 1`, the others 200; records when each arrived. */
function service() {
  const arrived: number[] = [];
  const fetch = async () => {
    arrived.push(Date.now());
    return arrived.length === 1 ? Response.json({ error: { code: 'rate_limited', message: 'slow down' } }, { status: 429, headers: { 'retry-after': '1' } }) : Response.json(post);
  };
  return { arrived, fetch };
}

/** Resolves once `b` hears of blocks `a` sets (its subscription is up): probes on keys of their own, at most 200. */
async function subscribed(a: RedisRateLimiter, b: RedisRateLimiter): Promise<void> {
  for (let i = 0; i < 200; i++) {
    a.block(`probe-${i}`, 60_000);
    await sleep(25);
    if (b.state(`probe-${i}`).blockedUntil !== undefined) return;
  }
  throw new Error('the second limiter never heard of a block');
}

/** The behaviour, the same on every client; `prefix` keeps the runs apart. */
function sharing(connect: () => Promise<{ clients: [RedisClientLike, RedisClientLike]; raw: (...args: string[]) => Promise<unknown>; close(): Promise<void> | void }>, onCluster = false) {
  let clients: [RedisClientLike, RedisClientLike];
  let raw: (...args: string[]) => Promise<unknown>;
  let close: () => Promise<void> | void;
  beforeAll(async () => ({ clients, raw, close } = await connect()));
  afterAll(async () => {
    await close?.();
  });

  it("a 429 in one limiter's client holds the other's: its request reaches the service only after the block", async () => {
    const prefix = `rl:${crypto.randomUUID()}`;
    const a = new RedisRateLimiter({ redis: clients[0], prefix });
    const b = new RedisRateLimiter({ redis: clients[1], prefix });
    try {
      await subscribed(a, b);
      const { arrived, fetch } = service();
      const first = new PostSched({ baseUrl: BASE, auth: 'tok_a', fetch, rateLimiter: a, maxRetries: 0 });
      const second = new PostSched({ baseUrl: BASE, auth: 'tok_b', fetch, rateLimiter: b });
      await expect(first.posts.get('post_1')).rejects.toThrow(/429/);
      const until = first.rateLimit.blockedUntil!.getTime();
      for (let i = 0; i < 200 && second.rateLimit.blockedUntil === undefined; i++) await sleep(5);
      expect(second.rateLimit.blockedUntil?.getTime()).toBeGreaterThanOrEqual(until);
      await second.posts.get('post_1');
      expect(arrived).toHaveLength(2);
      expect(arrived[1]).toBeGreaterThanOrEqual(until);
      expect(Number(await raw('PTTL', `${prefix}:{default}`))).toBeGreaterThan(-3); // stored with an expiry (or already expired)
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("two limiters pace one user's stated quota together: their calls go at most `limit` per window, none refused", { timeout: 30_000 }, async () => {
    const prefix = `rl:${crypto.randomUUID()}`;
    const a = new RedisRateLimiter({ redis: clients[0], prefix });
    const b = new RedisRateLimiter({ redis: clients[1], prefix });
    try {
      await subscribed(a, b);
      const service = windowService({ limit: 10, windowMs: 2_000 });
      const first = new PostSched({ baseUrl: BASE, auth: 'tok_a', fetch: service.fetch, rateLimiter: a });
      const second = new PostSched({ baseUrl: BASE, auth: 'tok_b', fetch: service.fetch, rateLimiter: b });
      for (let i = 0; i < 3; i++) await first.posts.get('post_1'); // 7 left: the user is paced, in Redis
      // 5 left. The second turn of `second` is taken after its first answer reached Redis (one connection, in order):
      // a request sent before its process knew the user is paced counts only once its answer is back.
      for (let i = 0; i < 2; i++) await second.posts.get('post_1');
      const calls = Array.from({ length: 15 }, (_, i) => (i % 2 === 0 ? first : second).posts.get('post_1'));
      const outcomes = await Promise.allSettled(calls);
      expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
      expect(service.refused()).toBe(0);
      // At most `limit` in every window (the first may leave one out for requests another process might have had on
      // their way when the quota became known), and every request was a call's: 20 calls, 20 requests.
      expect(service.windows.every((n) => n <= 10)).toBe(true);
      expect(service.windows.reduce((a, n) => a + n, 0)).toBe(20);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  // On a Redis Cluster, the processes counted are those subscribed through the key's node (PUBSUB NUMSUB is per node).
  if (!onCluster) it("leaves room in the first quota known for the requests another process had on their way: they are in no count yet", { timeout: 30_000 }, async () => {
    const prefix = `rl:${crypto.randomUUID()}`;
    const a = new RedisRateLimiter({ redis: clients[0], prefix });
    const b = new RedisRateLimiter({ redis: clients[1], prefix });
    try {
      await subscribed(a, b);
      const service = windowService({ limit: 10, windowMs: 10_000 });
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const first = new PostSched({ baseUrl: BASE, auth: 'tok_a', fetch: service.fetch, rateLimiter: a });
      // The other process's request: sent before anyone knew the user is paced, still on its way (not counted yet).
      const late = new PostSched({ baseUrl: BASE, auth: 'tok_b', fetch: () => gate.then(service.fetch), rateLimiter: b, maxRetries: 0 }).posts.get('post_1');
      for (let i = 0; i < 3; i++) await first.posts.get('post_1'); // 7 left: paced
      const calls = Array.from({ length: 7 }, () => first.posts.get('post_1').then(() => Date.now()));
      await sleep(300);
      open(); // it arrives now, the window's 10th request: the first quota left room for it
      await late;
      await Promise.all(calls);
      expect(service.refused()).toBe(0);
      expect(service.windows[0]).toBe(10);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('costs no Redis command while a user has most of its stated quota left', async () => {
    const [client] = clients;
    let commands = 0;
    const counted = 'call' in client ? { call: (...args: string[]) => (commands++, client.call(...(args as [string]))) } : { sendCommand: (args: string[]) => (commands++, (client as { sendCommand: (args: string[]) => Promise<unknown> }).sendCommand(args)) };
    const limiter = new RedisRateLimiter({ redis: counted, prefix: `rl:${crypto.randomUUID()}` });
    try {
      await sleep(100); // the two SCRIPT LOADs of the constructor
      const before = commands;
      const service = windowService({ limit: 100, windowMs: 60_000 });
      const user = new PostSched({ baseUrl: BASE, auth: 'tok_a', fetch: service.fetch, rateLimiter: limiter });
      await Promise.all(Array.from({ length: 20 }, () => user.posts.get('post_1')));
      expect(commands - before).toBe(0);
      expect(service.windows).toEqual([20]);
    } finally {
      await limiter.close();
    }
  });

  it('only extends: a shorter wait leaves the stored one; a limiter without the message learns the longer one', async () => {
    const prefix = `rl:${crypto.randomUUID()}`;
    const a = new RedisRateLimiter({ redis: clients[0], prefix });
    // No `duplicate`: no subscription, as a process that missed the message.
    const [client] = clients;
    const deaf = new RedisRateLimiter({ redis: 'call' in client ? { call: client.call.bind(client) } : { sendCommand: (client as { sendCommand: (args: string[]) => Promise<unknown> }).sendCommand.bind(client) }, prefix });
    try {
      a.block('user_1', 30_000);
      for (let i = 0; i < 200 && Number(await raw('PTTL', `${prefix}:{user_1}`)) < 0; i++) await sleep(5);
      deaf.block('user_1', 1_000);
      for (let i = 0; i < 200 && deaf.waitMs('user_1') <= 1_000; i++) await sleep(5);
      expect(deaf.waitMs('user_1')).toBeGreaterThan(20_000);
      expect(Number(await raw('PTTL', `${prefix}:{user_1}`))).toBeGreaterThan(20_000);
    } finally {
      await Promise.all([a.close(), deaf.close()]);
    }
  });
}

describe('RedisRateLimiter on one redis-server', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  for (const kind of CLIENT_KINDS) {
    describe(kind.name, () => {
      sharing(async () => {
        const [one, two] = await Promise.all([kind.connect(server.url), kind.connect(server.url)]);
        return { clients: [one.client, two.client], raw: one.raw, close: async () => void (await Promise.all([one.close(), two.close()])) };
      });
    });
  }

  it('refuses a bad option by name', () => {
    expect(() => new RedisRateLimiter({ redis: {} as never })).toThrow(ValidationError);
    expect(() => new RedisRateLimiter({ redis: new Redis(server.url, { lazyConnect: true }), prefix: '' })).toThrow(/prefix/);
  });

  it('refuses a `key` function that returns no string, naming its result, instead of sharing one "undefined" scope', async () => {
    const redis = new Redis(server.url, { lazyConnect: true });
    const rateLimiter = new RedisRateLimiter({ redis, key: ((userId: string) => (userId === 'u1' ? undefined : 42)) as never });
    try {
      const users = new UserClients({ oauth: { refresh: async () => Promise.reject(new Error('no refresh')) }, baseUrl: BASE, rateLimiter });
      expect(() => users.client('u1')).toThrow(ValidationError);
      expect(() => users.client('u1')).toThrow(/`key` returned undefined for a user id: it must return a string/);
      expect(() => users.rateLimit('u2')).toThrow(/`key` returned a value of type number/);
    } finally {
      await rateLimiter.close();
      redis.disconnect();
    }
  });
});

describe('RedisRateLimiter on a 3-master Redis Cluster (ioredis Cluster)', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  sharing(async () => {
    const one = new Cluster(cluster.nodes);
    const two = new Cluster(cluster.nodes);
    for (const c of [one, two]) c.on('error', () => {});
    return { clients: [one, two], raw: (command, ...args) => one.call(command, ...args), close: () => void [one, two].forEach((c) => c.disconnect()) };
  }, true);
});

describe('Redis stalled', () => {
  for (const kind of CLIENT_KINDS) {
    it(`${kind.name}: a paced user's calls go on this process's own turns once a TAKE times out, none refused, none hung`, { timeout: 30_000 }, async () => {
      const server = await startRedisServer();
      const connection = await kind.connect(server.url);
      const limiter = new RedisRateLimiter({ redis: connection.client, commandTimeoutMs: 200 });
      try {
        const service = windowService({ limit: 10, windowMs: 10_000 });
        const user = new PostSched({ baseUrl: BASE, auth: 'tok_1', fetch: service.fetch, rateLimiter: limiter, maxRetries: 0 });
        for (let i = 0; i < 3; i++) await user.posts.get('post_1'); // 7 left: paced, in Redis
        server.pause(); // SIGSTOP: every command now times out
        const calls = await Promise.allSettled(Array.from({ length: 7 }, () => user.posts.get('post_1')));
        expect(calls.map((o) => o.status)).toEqual(Array(7).fill('fulfilled'));
        expect(service.refused()).toBe(0);
        expect(service.windows).toEqual([10]);
      } finally {
        server.resume();
        await limiter.close();
        await connection.close();
        await server.stop();
      }
    });
  }
});

describe('Redis stopped', () => {
  for (const kind of CLIENT_KINDS) {
    it(`${kind.name}: every call still completes (a 429 then 200, and plain calls), none fails because of the limiter`, { timeout: 30_000 }, async () => {
      const server = await startRedisServer();
      const connection = await kind.connect(server.url);
      const limiter = new RedisRateLimiter({ redis: connection.client, commandTimeoutMs: 200 });
      try {
        await server.stop();
        const { arrived, fetch } = service();
        const client = new PostSched({ baseUrl: BASE, auth: 'tok_1', fetch, rateLimiter: limiter });
        const outcomes = await Promise.allSettled([client.posts.get('post_1'), ...Array.from({ length: 5 }, () => client.withOptions({}).posts.get('post_1'))]);
        expect(outcomes.map((o) => o.status)).toEqual(Array(6).fill('fulfilled'));
        // The block held this process's calls all the same: one 429, then each call once.
        expect(arrived).toHaveLength(7);
        // A user whose quota is paced: its turns are taken here, none waits on Redis past commandTimeoutMs more than once.
        const paced = windowService({ limit: 10, windowMs: 2_000 });
        const user = new PostSched({ baseUrl: BASE, auth: 'tok_2', fetch: paced.fetch, rateLimiter: limiter, maxRetries: 0 });
        for (let i = 0; i < 3; i++) await user.posts.get('post_1');
        const calls = await Promise.allSettled(Array.from({ length: 7 }, () => user.posts.get('post_1')));
        expect(calls.map((o) => o.status)).toEqual(Array(7).fill('fulfilled'));
        expect(paced.refused()).toBe(0);
      } finally {
        await limiter.close();
        await connection.close();
        await server.stop();
      }
    });
  }
});

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TokenSet } from '@postsched/sdk';
import { Redis } from 'ioredis';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { CLIENT_KINDS, type TestClient } from './redis-clients.js';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { TEST_KEY } from '../support/token-key.js';

function tokens(label: string): TokenSet {
  return { accessToken: `at-${label}`, refreshToken: `rt-${label}`, expiresAt: 1_900_000_000_000, scopes: [], tokenType: 'bearer' };
}

/** Blocks this process's event loop, as a long GC pause or a CPU-bound request would: no timer runs meanwhile. */
function stallEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Polls a condition (not a clock): resolves once it holds. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
// `?.`: when the set-up failed, its own error is the one to see, not a knock-on one from the clean-up.
afterAll(async () => {
  await server?.stop();
});

describe.each(CLIENT_KINDS)('RedisTokenStore.lock with $name', (kind) => {
  let conns: TestClient[];
  let key: string;
  beforeEach(async () => {
    conns = await Promise.all([1, 2, 3, 4].map(() => kind.connect(server.url)));
    key = `postsched:test:${crypto.randomUUID()}`;
  });
  afterEach(async () => {
    await Promise.all((conns ?? []).map((conn) => conn.close()));
  });
  const conn = () => conns[0] as TestClient;

  it('lets one holder at a time in when 40 lockers on 4 connections arrive at once', async () => {
    let inside = 0;
    let mostInside = 0;
    const lockers = conns.flatMap((c) =>
      Array.from({ length: 10 }, () => new RedisTokenStore({ encryptionKey: TEST_KEY, redis: c.client, key, lockWaitMs: 60_000 })),
    );
    await Promise.all(
      lockers.map((store) =>
        store.lock(async () => {
          mostInside = Math.max(mostInside, ++inside);
          // A read-modify-write that loses updates unless the lock serializes it.
          const count = Number((await conn().raw('GET', `${key}:count`)) ?? 0);
          await conn().raw('SET', `${key}:count`, String(count + 1));
          inside--;
        }),
      ),
    );
    expect(mostInside).toBe(1);
    expect(await conn().raw('GET', `${key}:count`)).toBe('40');
    expect(await conn().raw('EXISTS', `${key}:lock`)).toBe(0);
  });

  it('releases the lock when the holder throws, and passes the error on', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn().client, key });
    const boom = new Error('refresh failed');
    await expect(store.lock(async () => Promise.reject(boom))).rejects.toBe(boom);
    expect(await conn().raw('EXISTS', `${key}:lock`)).toBe(0);
    // Free at once: a locker that may not wait at all gets in.
    const impatient = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conns[1]!.client, key, lockWaitMs: 0 });
    expect(await impatient.lock(async () => 'in')).toBe('in');
  });

  it('returns what the holder returned and writes through set() while it holds the lock', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn().client, key });
    const result = await store.lock(async () => {
      await store.set(tokens('locked'));
      return 'done';
    });
    expect(result).toBe('done');
    expect(await store.get()).toEqual(tokens('locked'));
  });

  it('refuses the write of a holder whose lock expired during a stall, keeping the newer tokens of the next holder', async () => {
    const slow = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn().client, key, lockTtlMs: 100 });
    const next = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conns[1]!.client, key });
    await slow.set(tokens('old'));
    let nextDone!: () => void;
    const nextHasWritten = new Promise<void>((resolve) => (nextDone = resolve));

    const slowHolder = slow.lock(async () => {
      stallEventLoop(400); // no extension can run: the lock expires in Redis
      await nextHasWritten; // meanwhile another process takes the lock and refreshes
      await slow.set(tokens('stale'));
    });
    await until(async () => (await conn().raw('EXISTS', `${key}:lock`)) === 0);
    await next.lock(async () => next.set(tokens('new')));
    nextDone();

    await expect(slowHolder).rejects.toMatchObject({ name: 'SharedTokenStoreError', code: 'lock_lost' });
    expect(await next.get()).toEqual(tokens('new'));
  });

  it('refuses the write of an expired holder while the next holder still holds the lock', async () => {
    const slow = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn().client, key, lockTtlMs: 100 });
    const next = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conns[1]!.client, key });
    let release!: () => void;
    const slowMayWrite = new Promise<void>((resolve) => (release = resolve));
    const slowHolder = slow.lock(async () => {
      stallEventLoop(400);
      await slowMayWrite;
      await slow.set(tokens('stale'));
    });
    await until(async () => (await conn().raw('EXISTS', `${key}:lock`)) === 0);
    await next.lock(async () => {
      await next.set(tokens('new'));
      release();
      await expect(slowHolder).rejects.toMatchObject({ name: 'SharedTokenStoreError', code: 'lock_lost' });
      expect(await conn().raw('EXISTS', `${key}:lock`)).toBe(1); // the slow holder's release left ours alone
    });
    expect(await next.get()).toEqual(tokens('new'));
  });

  it('keeps the lock while a live holder runs longer than lockTtlMs (it extends it)', async () => {
    const holder = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn().client, key, lockTtlMs: 150 });
    const other = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conns[1]!.client, key, lockWaitMs: 0 });
    await holder.lock(async () => {
      // Each rise of the lock's remaining time is one extension; extensions come every lockTtlMs / 3 at most,
      // so six of them mean the holder has outlived two TTLs.
      let extensions = 0;
      let last = Number(await conn().raw('PTTL', `${key}:lock`));
      while (extensions < 6) {
        const now = Number(await conn().raw('PTTL', `${key}:lock`));
        expect(now).toBeGreaterThan(0);
        if (now > last) extensions++;
        last = now;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await expect(other.lock(async () => 'got in')).rejects.toMatchObject({ name: 'SharedTokenStoreError', code: 'lock_timeout' });
      await holder.set(tokens('slow-but-alive'));
    });
    expect(await holder.get()).toEqual(tokens('slow-but-alive'));
  });

  it('takes over the lock of a holder that died, once its TTL runs out', async () => {
    // A process killed while holding the lock: the key stays, with an owner nobody will release.
    await conn().raw('SET', `${key}:lock`, 'dead-process-owner', 'PX', '300');
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conns[1]!.client, key, lockWaitMs: 30_000 });
    let runs = 0;
    await store.lock(async () => {
      runs++;
      await store.set(tokens('after-takeover'));
    });
    expect(runs).toBe(1);
    expect(await store.get()).toEqual(tokens('after-takeover'));
  });

  it('fails with code lock_timeout when the holder keeps the lock longer than lockWaitMs', async () => {
    const holder = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn().client, key });
    const waiter = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conns[1]!.client, key, lockWaitMs: 50 });
    let ran = 0;
    await holder.lock(async () => {
      const error = await waiter.lock(async () => ran++).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'SharedTokenStoreError', code: 'lock_timeout', operation: 'lock', timeoutMs: 50, key });
    });
    expect(ran).toBe(0);
  });

  it('runs a nested lock() of the same store at once instead of waiting for itself', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn().client, key, lockWaitMs: 0 });
    const result = await store.lock(() =>
      store.lock(async () => {
        await store.set(tokens('nested'));
        return 'inner';
      }),
    );
    expect(result).toBe('inner');
    expect(await store.get()).toEqual(tokens('nested'));
  });

  it('writes without the lock check outside lock(), e.g. after the first authorization', async () => {
    const holder = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn().client, key });
    const other = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conns[1]!.client, key });
    await holder.lock(async () => {
      await other.set(tokens('outside'));
    });
    expect(await other.get()).toEqual(tokens('outside'));
  });

  it('runs the scripts again after the server forgot them (SCRIPT FLUSH)', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn().client, key });
    await store.lock(() => store.set(tokens('a')));
    await conn().raw('SCRIPT', 'FLUSH');
    await store.lock(() => store.set(tokens('b')));
    expect(await store.get()).toEqual(tokens('b'));
    expect(await conn().raw('EXISTS', `${key}:lock`)).toBe(0);
  });
});

describe('RedisTokenStore with an ioredis client that returns numbers as strings (stringNumbers)', () => {
  it('writes inside the lock, compare-and-sets, and extends the lock of a live holder', async () => {
    const client = new Redis(server.url, { stringNumbers: true });
    const other = new Redis(server.url);
    try {
      const key = `postsched:test:${crypto.randomUUID()}`;
      const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: client, key, lockTtlMs: 150 });
      await store.lock(() => store.set(tokens('a'))); // a written script reply "1" is a write, not a lost lock
      expect(await store.set(tokens('b'), { expectedRefreshToken: 'rt-a' })).toBe(true);
      expect(await store.set(tokens('c'), { expectedRefreshToken: 'rt-a' })).toBe(false);
      const waiter = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: other, key, lockWaitMs: 0 });
      await store.lock(async () => {
        let extensions = 0;
        let last = Number(await other.call('PTTL', `${key}:lock`));
        while (extensions < 6) {
          const now = Number(await other.call('PTTL', `${key}:lock`));
          expect(now).toBeGreaterThan(0);
          if (now > last) extensions++;
          last = now;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        await expect(waiter.lock(async () => 'got in')).rejects.toMatchObject({ name: 'SharedTokenStoreError', code: 'lock_timeout' });
      });
      expect(await store.get()).toEqual(tokens('b'));
    } finally {
      client.disconnect();
      other.disconnect();
    }
  });
});

describe('RedisTokenStore.lock when the take reaches Redis twice (ioredis resends a command whose answer was lost)', () => {
  it('holds the lock its first copy took, instead of waiting for its own lease to expire, and releases it', async () => {
    const client = new Redis(server.url);
    try {
      const key = `postsched:test:${crypto.randomUUID()}`;
      let sentTwice = 0;
      // What ioredis's `autoResendUnfulfilledCommands` does after a reconnect: the first copy ran (its answer was
      // lost), the second is answered. Here for the store's first command on `${key}:lock`, which is the take.
      const resending = {
        call: async (command: string, ...args: string[]) => {
          if (sentTwice === 0 && args.includes(`${key}:lock`)) {
            sentTwice++;
            await client.call(command, ...args);
          }
          return client.call(command, ...args);
        },
      };
      const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: resending, key, lockWaitMs: 0 });
      expect(await store.lock(async () => 'in')).toBe('in');
      expect(sentTwice).toBe(1);
      expect(await client.call('EXISTS', `${key}:lock`)).toBe(0);
      expect(await client.call('EXISTS', `${key}:lock:holder`)).toBe(0); // released, not 'expired' for the next taker
    } finally {
      client.disconnect();
    }
  });
});

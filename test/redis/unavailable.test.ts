import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TokenSet } from '@postsched/sdk';
import { RedisTokenStore, SharedTokenStoreError } from '@postsched/sdk/redis';
import { CLIENT_KINDS, type TestClient } from './redis-clients.js';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { TEST_KEY } from '../support/token-key.js';

const TOKENS: TokenSet = {
  accessToken: 'at-secret-access',
  refreshToken: 'rt-secret-refresh',
  expiresAt: 1_900_000_000_000,
  scopes: [],
  tokenType: 'bearer',
};

function expectNoSecrets(error: unknown): void {
  const shown = [inspect(error, { depth: Infinity, showHidden: true }), JSON.stringify(error), String(error)].join('\n');
  expect(shown).not.toContain('secret');
}

// Each test gets its own server, since most of them stop it.
describe.each(CLIENT_KINDS)('RedisTokenStore with $name when Redis is down or slow', (kind) => {
  let server: RedisServer;
  let conn: TestClient;
  let key: string;
  beforeEach(async () => {
    server = await startRedisServer();
    conn = await kind.connect(server.url);
    key = `postsched:test:${crypto.randomUUID()}`;
  });
  // `?.`: when the set-up failed, its own error is the one to see, not a knock-on one from the clean-up.
  afterEach(async () => {
    await conn?.close();
    await server?.stop();
  });

  it('rejects get, set and lock with SharedTokenStoreError (unavailable or timeout) instead of hanging when Redis stopped', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key, commandTimeoutMs: 300 });
    await store.set(TOKENS);
    await server.stop();

    let lockedRuns = 0;
    const results = await Promise.allSettled([store.get(), store.set(TOKENS), store.lock(async () => lockedRuns++)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    const errors = results.map((r) => (r as PromiseRejectedResult).reason as SharedTokenStoreError);
    for (const error of errors) {
      expect(error).toBeInstanceOf(SharedTokenStoreError);
      expect(['unavailable', 'timeout']).toContain(error.code);
      expect(error.key).toBe(key);
      expectNoSecrets(error);
    }
    expect(errors.map((e) => e.operation)).toEqual(['get', 'set', 'lock']);
    expect(lockedRuns).toBe(0);
  });

  it('rejects with SharedTokenStoreError (timeout) when Redis is too slow, and works again once it answers', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key, commandTimeoutMs: 100 });
    await store.set(TOKENS);
    const admin = await kind.connect(server.url);
    try {
      await admin.raw('CLIENT', 'PAUSE', '1000', 'ALL'); // every client's commands wait 1 s on the server
      const error = await store.get().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SharedTokenStoreError);
      expect(error).toMatchObject({ code: 'timeout', operation: 'get', timeoutMs: 100 });
      let answered: TokenSet | undefined;
      while (answered === undefined) answered = await store.get().catch(() => undefined);
      expect(answered).toEqual(TOKENS);
    } finally {
      await admin.close();
    }
  });

  it('rejects at once when the client was closed', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key, commandTimeoutMs: 60_000 });
    await conn.close();
    const error = await store.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SharedTokenStoreError);
    expect(error).toMatchObject({ code: 'unavailable' });
    expect((error as SharedTokenStoreError).timeoutMs).toBeUndefined(); // the client said so; no time-out needed
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it('keeps the tokens out of the error when Redis answers a write with an error', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key });
    const error = await store
      .lock(async () => {
        // Break the lock key's type so the compare-and-set script fails on the server (WRONGTYPE).
        await conn.raw('DEL', `${key}:lock`);
        await conn.raw('RPUSH', `${key}:lock`, 'not-a-lock');
        await store.set(TOKENS);
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SharedTokenStoreError);
    expect(error).toMatchObject({ code: 'unavailable', operation: 'set' });
    expect(String((error as Error).cause)).toContain('WRONGTYPE');
    expectNoSecrets(error);
  });

  it('keeps the tokens out of the error when Redis refuses the script command and quotes its arguments back', async () => {
    // A Redis hardened with `rename-command EVALSHA ""` answers "unknown command 'EVALSHA', with args beginning
    // with: …": the first 128 characters of the arguments, the stored token JSON among them, cut anywhere.
    await conn.close();
    await server.stop();
    server = await startRedisServer(['--rename-command', 'EVALSHA', '""']);
    conn = await kind.connect(server.url);
    // Every write of tokens is a script (it also clears the mark of a dead grant): the first one already carries
    // them, in clear with `encryptionKey: 'none'`, encrypted otherwise.
    for (const encryptionKey of ['none', TEST_KEY] as const) {
      for (const key of ['k', `postsched:test:${crypto.randomUUID()}`]) {
        const store = new RedisTokenStore({ encryptionKey, redis: conn.client, key });
        const error = await store.set({ ...TOKENS, expiresAt: 0 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SharedTokenStoreError);
        expect(error).toMatchObject({ code: 'unavailable' });
        expect(String((error as Error).cause)).toContain('unknown command');
        expectNoSecrets(error);
      }
    }
  });
});

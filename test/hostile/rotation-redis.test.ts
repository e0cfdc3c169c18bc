/**
 * Issue 12 items 2 and 8 across two real processes sharing one user's tokens through Redis, against the fake
 * service (which rotates refresh tokens and refuses a used one): the stored refresh token only ever moves forward,
 * whatever fails in one process, and a Redis that lost its data mid-refresh ends with the newest tokens stored.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { type RedisServer, startRedisServer } from '../redis/redis-server.js';
import type { RotationWorkerConfig, RotationWorkerMessage } from './rotation-worker.js';
import { TEST_KEY } from '../support/token-key.js';

const WORKER = fileURLToPath(new URL('./rotation-worker.ts', import.meta.url));
const APP = { clientId: 'app_rotation', clientSecret: 'secret_rotation_1234', redirectUris: ['http://127.0.0.1/callback'] };

interface Worker {
  next(type: RotationWorkerMessage['type']): Promise<RotationWorkerMessage>;
  call(message: { type: 'get' } | { type: 'force'; token: string }): Promise<RotationWorkerMessage>;
  send(message: { type: 'continue' | 'exit' }): void;
  stop(): Promise<void>;
}

function startWorker(config: RotationWorkerConfig): Worker {
  const child: ChildProcess = fork(WORKER, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, WORKER_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const received: RotationWorkerMessage[] = [];
  const waiting: Array<{ type: string; resolve: (m: RotationWorkerMessage) => void }> = [];
  child.on('message', (message: RotationWorkerMessage) => {
    const at = waiting.findIndex((w) => w.type === message.type);
    if (at === -1) received.push(message);
    else waiting.splice(at, 1)[0]?.resolve(message);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const next = (type: string) => {
    const at = received.findIndex((m) => m.type === type);
    if (at !== -1) return Promise.resolve(received.splice(at, 1)[0]!);
    return new Promise<RotationWorkerMessage>((resolve) => waiting.push({ type, resolve }));
  };
  return {
    next,
    call(message) {
      child.send(message);
      return next('result');
    },
    send: (message) => child.connected && child.send(message),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ type: 'exit' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

let redisServer: RedisServer;
beforeAll(async () => {
  redisServer = await startRedisServer();
});
afterAll(async () => {
  await redisServer?.stop();
});

describe('two processes sharing tokens through Redis', () => {
  let fake: FakeService;
  let baseUrl: string;
  let key: string;
  let redis: Redis;
  let store: RedisTokenStore;
  let workers: Worker[];

  beforeEach(async () => {
    fake = createFakeService({ apps: [APP] });
    baseUrl = (await fake.listen()).url;
    key = `postsched:rotation:${crypto.randomUUID()}`;
    redis = new Redis(redisServer.url);
    store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key });
    workers = [];
    const issued = fake.issueTokenSet({ clientId: APP.clientId });
    await store.set({ ...issued, expiresAt: Date.now() - 1_000 }); // signed in earlier, expired since
  });
  afterEach(async () => {
    await Promise.all((workers ?? []).map((w) => w.stop()));
    redis?.disconnect();
    await fake?.close();
  });

  async function start(mode: RotationWorkerConfig['mode']): Promise<Worker> {
    const worker = startWorker({ redisUrl: redisServer.url, key, baseUrl, clientId: APP.clientId, clientSecret: APP.clientSecret, mode });
    workers.push(worker);
    await worker.next('ready');
    return worker;
  }

  /** Each process in turn, so the order of events is the one the scenario names. */
  async function rotationScenario(firstMode: RotationWorkerConfig['mode']): Promise<void> {
    const first = await start(firstMode);
    const second = await start('normal');

    const failed = await first.call({ type: 'get' });
    expect(failed).toMatchObject({ ok: false, error: 'TokenStoreError' });
    const afterFirst = (await store.get())!;

    // The other process is told the stored access token was refused (a 401) and rotates the refresh token.
    const rotated = await second.call({ type: 'force', token: afterFirst.accessToken });
    expect(rotated).toMatchObject({ ok: true });
    const newest = (await store.get())!;
    expect(newest.refreshToken).not.toBe(afterFirst.refreshToken);

    // The first process goes on: it must take the newer tokens, never write its older ones back.
    const resumed = await first.call({ type: 'get' });
    expect(resumed).toEqual({ type: 'result', ok: true, accessToken: newest.accessToken });
    expect((await store.get())!.refreshToken).toBe(newest.refreshToken);

    // The stored refresh token still works: the user is not logged out.
    expect(await second.call({ type: 'force', token: newest.accessToken })).toMatchObject({ ok: true });
  }

  it('onTokens fails once in one process: its older tokens never go back over the other process\'s rotation', async () => {
    await rotationScenario('fail-on-tokens-once');
  });

  it('a Redis write that lands after its time-out: settled inside the lock before it is given up, one refresh, no error', async () => {
    const first = await start('set-lands-then-fails-once');
    const second = await start('normal');
    const result = await first.call({ type: 'get' });
    expect(result).toMatchObject({ ok: true });
    const stored = (await store.get())!;
    expect(stored.accessToken).toBe((result as { accessToken: string }).accessToken);
    expect(await second.call({ type: 'get' })).toEqual({ type: 'result', ok: true, accessToken: stored.accessToken });
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);
  });

  it('Redis loses its data (restart) while one process refreshes: that process stores the newest tokens, nobody refreshes a stale one', async () => {
    const holder = await start('pause-after-refresh');
    const other = await start('normal');
    const pending = holder.call({ type: 'get' });
    await holder.next('paused'); // the service has rotated the refresh token; the answer is not stored yet
    await redis.flushall(); // a restart without persistence: tokens and lock are gone
    holder.send({ type: 'continue' });
    const stored = await pending;
    expect(stored).toMatchObject({ ok: true });
    const tokens = (await store.get())!;
    expect(tokens.accessToken).toBe((stored as { accessToken: string }).accessToken);
    expect(await other.call({ type: 'get' })).toEqual({ type: 'result', ok: true, accessToken: tokens.accessToken });
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);
  });

  it('RedisTokenStore.set with expectedRefreshToken is an atomic compare-and-set', async () => {
    const current = (await store.get())!;
    const newer = { ...current, accessToken: 'at_newer', refreshToken: 'rt_newer' };
    expect(await store.set(newer, { expectedRefreshToken: current.refreshToken })).toBe(true);
    const stale = { ...current, accessToken: 'at_stale', refreshToken: 'rt_stale' };
    expect(await store.set(stale, { expectedRefreshToken: current.refreshToken })).toBe(false);
    expect((await store.get())!.refreshToken).toBe('rt_newer');
    expect(await store.set(newer, { expectedRefreshToken: current.refreshToken })).toBe(true); // a repeated write
    await redis.del(key);
    expect(await store.set(stale, { expectedRefreshToken: 'rt_newer' })).toBe(true); // nothing stored: written
  });
});

/**
 * Whole processes sharing one user's tokens through Redis, against the fake service on 127.0.0.1 (which
 * rotates refresh tokens and refuses a used one, as the service is assumed to). Half the workers use
 * ioredis and half node-redis, on the same key.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { startWorker, type Worker } from './multi-process/fleet.js';
import type { WorkerConfig, WorkerMessage } from './multi-process/token-worker.js';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { TEST_KEY } from '../support/token-key.js';

type Done = Extract<WorkerMessage, { type: 'done' }>;

const APP = { clientId: 'app_fleet', clientSecret: 'secret_fleet_1234', redirectUris: ['http://127.0.0.1/callback'] };

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
// `?.`: when the set-up failed, its own error is the one to see, not a knock-on one from the clean-up.
afterAll(async () => {
  await server?.stop();
});

describe('RedisTokenStore shared by several processes', () => {
  let fake: FakeService;
  let baseUrl: string;
  let key: string;
  let workers: Worker[];

  beforeEach(async () => {
    fake = createFakeService({ apps: [APP] });
    baseUrl = (await fake.listen()).url;
    key = `postsched:test:${crypto.randomUUID()}`;
    workers = [];
    // The user authorized earlier; the access token has expired since.
    const issued = fake.issueTokens({ clientId: APP.clientId });
    const redis = new Redis(server.url);
    await new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key }).set({
      accessToken: issued.access_token,
      refreshToken: issued.refresh_token,
      expiresAt: Date.now() - 1_000,
      scopes: issued.scope.split(' '),
      tokenType: 'bearer',
    });
    redis.disconnect();
  });
  afterEach(async () => {
    await Promise.all((workers ?? []).map((w) => w.stop()));
    await fake?.close();
  });

  function start(count: number, overrides: Partial<WorkerConfig> = {}): Worker[] {
    const started = Array.from({ length: count }, (_, i) =>
      startWorker({
        client: i % 2 === 0 ? 'ioredis' : 'node-redis',
        redisUrl: server.url,
        key,
        lockTtlMs: 1_000,
        baseUrl,
        clientId: APP.clientId,
        clientSecret: APP.clientSecret,
        calls: 100,
        mode: 'normal',
        ...overrides,
      }),
    );
    workers.push(...started);
    return started;
  }

  async function run(fleet: Worker[]): Promise<Done[]> {
    await Promise.all(fleet.map((w) => w.next('ready')));
    for (const w of fleet) w.send({ type: 'go' });
    return Promise.all(fleet.map((w) => w.next('done')));
  }

  it('refreshes once when 8 processes × 100 concurrent calls arrive with an expired token', { timeout: 120_000 }, async () => {
    const results = await run(start(8));

    expect(results.map((r) => r.succeeded)).toEqual(Array(8).fill(100));
    expect(results.map((r) => r.errors)).toEqual(Array(8).fill({}));
    const tokens = new Set(results.flatMap((r) => r.accessTokens));
    expect(tokens.size).toBe(1); // every caller in every process got the one refreshed token
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);
  });

  it('replaces a holder SIGKILLed before its token request left, after the TTL; callers see no error', { timeout: 120_000 }, async () => {
    const [victim] = start(1, { mode: 'die-holding-lock', calls: 1 });
    await victim!.next('ready');
    victim!.send({ type: 'go' });
    await victim!.next('holding-lock');

    const survivors = start(3);
    await Promise.all(survivors.map((w) => w.next('ready')));
    for (const w of survivors) w.send({ type: 'go' });
    await victim!.kill(); // holding the lock, nothing sent: the lock is freed only by its TTL

    const results = await Promise.all(survivors.map((w) => w.next('done')));
    expect(results.map((r) => r.succeeded)).toEqual([100, 100, 100]);
    expect(results.map((r) => r.errors)).toEqual([{}, {}, {}]);
    expect(new Set(results.flatMap((r) => r.accessTokens)).size).toBe(1);
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);
  });

  it(
    'ends in ReauthorizationRequiredError, not a hang or a loop, when the holder is SIGKILLed after its token request left',
    { timeout: 120_000 },
    async () => {
      const [victim] = start(1, { mode: 'die-before-set', calls: 1 });
      await victim!.next('ready');
      victim!.send({ type: 'go' });
      await victim!.next('refreshed-unsaved');
      // The service rotated the refresh token; the only copy of the new one dies with the process.
      expect(fake.stats.tokenRequests.refresh_token).toBe(1);
      await victim!.kill();

      const results = await run(start(3));
      expect(results.map((r) => r.succeeded)).toEqual([0, 0, 0]);
      expect(results.map((r) => r.errors)).toEqual(Array(3).fill({ ReauthorizationRequiredError: 100 }));
      // One refused attempt in the fleet: the process that took the lock over sends the stored token once and marks the
      // grant dead in the store; the others read the mark and send nothing. No retry loop.
      expect(fake.stats.tokenRequests.refresh_token).toBe(1 + 1);
    },
  );
});

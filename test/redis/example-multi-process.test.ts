/**
 * Runs examples/redis-multi-process.ts as copied (tsx, node:cluster with 4 workers) against `postsched mock` and a
 * real redis-server, each in its own process: a user signs in through the example's login route, then 40
 * concurrent requests across the workers after the token expired make one refresh for the whole fleet.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { answerConsentPage } from '../support/consent.js';
import { freePort, type Running, start, startMock, stopAll } from '../support/processes.js';
import { type RedisServer, startRedisServer } from './redis-server.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/redis-multi-process.ts', import.meta.url));
const ENCRYPTION_KEY = Buffer.alloc(32, 42).toString('base64');

/** The mock's log lines of successful token requests (the exchange and each refresh). */
const tokenRequests = (mock: Running) => mock.stdout().match(/POST \/oauth\/token → 200/g)?.length ?? 0;

describe('examples/redis-multi-process.ts against postsched mock', () => {
  let redisServer: RedisServer | undefined;
  let mock: Running | undefined;
  let example: Running | undefined;
  let url: string;

  beforeAll(async () => {
    // The example's port must be in the redirect URI, so it is chosen first (3000 may be taken on this machine).
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    let env: Record<string, string>;
    [redisServer, { mock, env }] = await Promise.all([startRedisServer(), startMock(['--redirect-uri', redirectUri])]);
    example = start(EXAMPLE, [], {
      ...env,
      POSTSCHED_REDIRECT_URI: redirectUri,
      REDIS_URL: redisServer.url,
      TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
      WORKERS: '4',
      PORT: String(port),
    });
    url = (await example.waitFor(/listening on (http:\/\/\S+) \(4 workers\)/))[1] as string;
  }, 120_000);

  afterAll(async () => {
    await example?.stop('SIGKILL');
    await stopAll(mock);
    await redisServer?.stop();
  });

  it('signs a user in through its login route; the callback may reach any worker', async () => {
    const login = await fetch(`${url}/users/user_1/login`, { redirect: 'manual' });
    expect(login.status).toBe(302);
    const callback = await answerConsentPage(login.headers.get('location') ?? '');
    expect(callback).toMatch(new RegExp(`^${url}/callback\\?code=`));
    const landed = await fetch(callback, { redirect: 'manual' });
    expect(landed.status).toBe(302);
    expect(landed.headers.get('location')).toBe('/users/user_1/accounts');
    const replay = await fetch(callback, { redirect: 'manual' });
    expect(replay.status).toBe(400); // the pending login was read once
  });

  it('serves 40 concurrent requests across its workers with one token refresh after the token expired', { timeout: 60_000 }, async () => {
    // An hour later: the stored access token has expired (by the local clock, which the SDK reads).
    const redis = new Redis(redisServer?.url as string);
    const store = new RedisTokenStore({ redis, key: 'postsched:tokens:{user_1}', encryptionKey: ENCRYPTION_KEY });
    const stored = await store.get();
    expect(stored?.scopes).toEqual(['accounts:read']);
    await store.set({ ...(stored as NonNullable<typeof stored>), expiresAt: Date.now() - 1_000 });
    redis.disconnect();
    const before = tokenRequests(mock as Running);

    const answers = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const response = await fetch(`${url}/users/user_1/accounts`);
        return { status: response.status, body: (await response.json()) as { worker: number; accounts: { id: string }[] } };
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    expect(answers[0]?.body.accounts.map((a) => a.id)).toEqual(['acc_demo_x', 'acc_demo_linkedin']);
    expect(new Set(answers.map((a) => a.body.worker)).size).toBeGreaterThan(1); // served by several processes
    expect(tokenRequests(mock as Running) - before).toBe(1);
  });

  it('answers 401 with the way to log in for a user without tokens', async () => {
    const response = await fetch(`${url}/users/user_without_tokens/accounts`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'reauthorization_required', login: '/users/user_without_tokens/login' });
  });

  it('stops all its workers on SIGTERM', { timeout: 30_000 }, async () => {
    expect(await example?.stop('SIGTERM')).toBe(0);
    await expect(fetch(`${url}/users/user_1/accounts`)).rejects.toThrow();
  });
});

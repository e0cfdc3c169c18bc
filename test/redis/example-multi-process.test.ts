/**
 * Runs examples/redis-multi-process.ts as users would (tsx, node:cluster with 4 workers) against a real
 * redis-server and the fake service on 127.0.0.1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { type RedisServer, startRedisServer } from './redis-server.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/redis-multi-process.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const APP = { clientId: 'app_example', clientSecret: 'secret_example_1234', redirectUris: ['http://127.0.0.1:3000/oauth/callback'] };
const ENCRYPTION_KEY = Buffer.alloc(32, 42).toString('base64');

describe('examples/redis-multi-process.ts', () => {
  let redisServer: RedisServer;
  let fake: FakeService;
  let example: ChildProcess;
  let url: string;
  let output = '';

  beforeAll(async () => {
    redisServer = await startRedisServer();
    fake = createFakeService({ apps: [APP] });
    const baseUrl = (await fake.listen()).url;

    // What the OAuth callback would have stored: the user's tokens, expired by now.
    const issued = fake.issueTokens({ clientId: APP.clientId, scopes: ['accounts:read'] });
    const redis = new Redis(redisServer.url);
    await new RedisTokenStore({ redis, key: 'postsched:tokens:user_1', encryptionKey: ENCRYPTION_KEY }).set({
      accessToken: issued.access_token,
      refreshToken: issued.refresh_token,
      expiresAt: Date.now() - 1_000,
      scopes: ['accounts:read'],
      tokenType: 'bearer',
    });
    redis.disconnect();

    example = spawn(process.execPath, ['--import', 'tsx', EXAMPLE], {
      cwd: ROOT,
      env: {
        ...process.env,
        REDIS_URL: redisServer.url,
        POSTSCHED_BASE_URL: baseUrl,
        POSTSCHED_CLIENT_ID: APP.clientId,
        POSTSCHED_CLIENT_SECRET: APP.clientSecret,
        TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
        WORKERS: '4',
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    example.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    url = await new Promise<string>((resolve, reject) => {
      example.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const found = /listening on (http:\/\/\S+)/.exec(output);
        if (found) resolve(found[1] as string);
      });
      example.once('exit', (code) => reject(new Error(`the example exited (${code}) before listening:\n${output}`)));
    });
  }, 120_000);

  afterAll(async () => {
    if (example.exitCode === null && example.signalCode === null) {
      example.kill('SIGKILL');
      await new Promise((resolve) => example.once('exit', resolve));
    }
    await fake?.close();
    await redisServer?.stop();
  });

  it('serves 40 concurrent requests across its workers with one token refresh', { timeout: 60_000 }, async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const response = await fetch(`${url}/users/user_1/accounts`);
        return { status: response.status, body: (await response.json()) as { worker: number; accounts: { id: string }[] } };
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    expect(answers[0]?.body.accounts.map((a) => a.id)).toEqual(['acc_demo_x', 'acc_demo_linkedin']);
    expect(new Set(answers.map((a) => a.body.worker)).size).toBeGreaterThan(1); // served by several processes
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);
  });

  it('answers 401 reauthorization_required for a user without tokens', async () => {
    const response = await fetch(`${url}/users/user_without_tokens/accounts`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'reauthorization_required', login: '/oauth/login' });
  });

  it('stops all its workers on SIGTERM', { timeout: 30_000 }, async () => {
    const exited = new Promise<number | null>((resolve) => example.once('exit', (code) => resolve(code)));
    example.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${url}/users/user_1/accounts`)).rejects.toThrow();
  });
});

/**
 * `postsched rekey`: the CLI face of rotateTokenEncryption, run as a child process against a real redis-server.
 * The keyring comes from the environment; no output holds a key, a token or the Redis URL's password.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenSet } from '@postsched/sdk';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { runCli } from '../support/processes.js';
import { type RedisServer, startRedisServer } from '../redis/redis-server.js';

const K1 = Buffer.alloc(32, 1).toString('base64');
const K2 = Buffer.alloc(32, 2).toString('base64');
const KEYRING = JSON.stringify({ current: 'k2', keys: { k1: K1, k2: K2 } });
const TOKENS: TokenSet = { accessToken: 'at-cli-secret', refreshToken: 'rt-cli-secret', expiresAt: 1_900_000_000_000, scopes: [], tokenType: 'bearer' };

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url);
  for (const user of ['a', 'b', 'c']) await new RedisTokenStore({ redis, key: `cli:tokens:${user}`, encryptionKey: K1 }).set(TOKENS);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

/** No key, no token, no password in anything the command printed. */
function expectNoSecrets(output: string): void {
  for (const secret of [K1, K2, 'cli-secret', 'pa55word']) expect(output).not.toContain(secret);
}

describe('postsched rekey', () => {
  it('fails a dry run with the final keyring while values are still under k1 (exit 1, the count named), never saying a key can go', async () => {
    const k2Only = JSON.stringify({ current: 'k2', keys: { k2: K2 } });
    const early = await runCli(['rekey', '--match', 'cli:tokens:*', '--dry-run'], { POSTSCHED_TOKEN_KEYRING: k2Only, REDIS_URL: server.url });
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/`encryptionKey` is missing a key: 3 of 3 stored values cannot be read with this keyring/);
    expect(early.output).not.toMatch(/can be removed/);
    // A real run with it rewrites nothing, fails too, and says the same.
    const run = await runCli(['rekey', '--match', 'cli:tokens:*'], { POSTSCHED_TOKEN_KEYRING: k2Only, REDIS_URL: server.url });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('The keyring is missing a key: 3 of 3 stored values');
    expect(run.output).not.toMatch(/can be removed/);
    expect(await redis.get('cli:tokens:a')).toMatch(/^enc:v1:/);
    for (const output of [early.output, run.output]) expectNoSecrets(output);
  });

  it('counts with --dry-run (exit 1: values left under k1), rewrites them (exit 0), then finds none left', async () => {
    const env = { POSTSCHED_TOKEN_KEYRING: KEYRING, REDIS_URL: server.url };
    const dry = await runCli(['rekey', '--match', 'cli:tokens:*', '--dry-run'], env);
    expect(dry).toMatchObject({ code: 1, stdout: '3 token values matching "cli:tokens:*"; would rewrite 3 with key "k2".\n' });
    expect(dry.stderr).toBe('3 values are still under older keys.\n');
    expect(await redis.get('cli:tokens:a')).toMatch(/^enc:v1:/);

    const run = await runCli(['rekey', '--match', 'cli:tokens:*'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('3 rewritten with key "k2".');
    expect(run.stdout).toContain('the older keys can be removed');
    const k2Only = { current: 'k2', keys: { k2: K2 } };
    expect(await new RedisTokenStore({ redis, key: 'cli:tokens:a', encryptionKey: k2Only }).get()).toEqual(TOKENS);

    const after = await runCli(['rekey', '--match', 'cli:tokens:*', '--dry-run'], { ...env, POSTSCHED_TOKEN_KEYRING: JSON.stringify(k2Only) });
    expect(after).toMatchObject({ code: 0, stderr: '' });
    for (const output of [dry.output, run.output, after.output]) expectNoSecrets(output);
  });

  it('encrypts the tokens kept in clear with a keyring that says allowPlaintext, and then finds none in clear without it', async () => {
    for (const user of ['a', 'b']) await new RedisTokenStore({ redis, key: `clr:tokens:${user}`, encryptionKey: 'none' }).set(TOKENS);
    const k1 = { current: 'k1', keys: { k1: K1 } };
    const refused = await runCli(['rekey', '--match', 'clr:tokens:*', '--dry-run'], { POSTSCHED_TOKEN_KEYRING: JSON.stringify(k1), REDIS_URL: server.url });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('in clear while the keyring does not say `allowPlaintext: true`');
    const env = { POSTSCHED_TOKEN_KEYRING: JSON.stringify({ ...k1, allowPlaintext: true }), REDIS_URL: server.url };
    const run = await runCli(['rekey', '--match', 'clr:tokens:*'], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('2 token values matching "clr:tokens:*" (2 in clear); 2 rewritten with key "k1".');
    expect(run.stdout).toContain('the older keys and allowPlaintext can be removed');
    expect(await redis.get('clr:tokens:a')).toMatch(/^enc:v2:k1:/);
    const after = await runCli(['rekey', '--match', 'clr:tokens:*', '--dry-run'], { POSTSCHED_TOKEN_KEYRING: JSON.stringify(k1), REDIS_URL: server.url });
    expect(after).toMatchObject({ code: 0, stderr: '' });
    for (const output of [refused.output, run.output, after.output]) expectNoSecrets(output);
  });

  it.each([
    ['no keyring', {}, 2, /pass --keyring or set POSTSCHED_TOKEN_KEYRING/],
    ['a keyring that is not JSON', { POSTSCHED_TOKEN_KEYRING: `k2=${K2}` }, 2, /POSTSCHED_TOKEN_KEYRING is not JSON/],
    ['a key of 16 bytes', { POSTSCHED_TOKEN_KEYRING: JSON.stringify({ current: 'k1', keys: { k1: Buffer.alloc(16).toString('base64') } }) }, 1, /ValidationError: `encryptionKey.keys.k1` must decode to 32 bytes/],
  ])('refuses %s, saying what to fix and showing no key', async (_, keyringEnv, code, message) => {
    const { code: exit, stderr, output } = await runCli(['rekey', '--match', 'cli:tokens:*'], { REDIS_URL: server.url, ...keyringEnv });
    expect(exit).toBe(code);
    expect(stderr).toMatch(message);
    expectNoSecrets(output);
  });

  it('fails in one line, without the password, when Redis cannot be reached', async () => {
    const { code, stderr } = await runCli(['rekey', '--match', 'x:*', '--redis-url', 'redis://:pa55word@127.0.0.1:1'], { POSTSCHED_TOKEN_KEYRING: KEYRING });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^postsched rekey: could not connect to Redis: .*ECONNREFUSED/);
    expectNoSecrets(stderr);
  });
});

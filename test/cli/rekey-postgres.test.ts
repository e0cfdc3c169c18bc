/**
 * `postsched rekey --postgres-url`: the CLI face of rotateTokenEncryption from `@postsched/sdk/postgres`, run as a
 * child process against a real PostgreSQL server. No output holds a key, a token or the URL's password.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenSet } from '@postsched/sdk';
import { createTokenTable, PostgresTokenStore } from '@postsched/sdk/postgres';
import { runCli } from '../support/processes.js';
import { type PostgresServer, startPostgresServer } from '../postgres/postgres-server.js';

const K1 = Buffer.alloc(32, 1).toString('base64');
const K2 = Buffer.alloc(32, 2).toString('base64');
const KEYRING = JSON.stringify({ current: 'k2', keys: { k1: K1, k2: K2 } });
const TOKENS: TokenSet = { accessToken: 'at-cli-secret', refreshToken: 'rt-cli-secret', expiresAt: 1_900_000_000_000, scopes: [], tokenType: 'bearer' };

let server: PostgresServer;
let pool: pg.Pool;
beforeAll(async () => {
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: server.url, max: 2 });
  pool.on('error', () => {});
  await createTokenTable(pool, { table: 'cli_tokens' });
  for (const user of ['a', 'b', 'c']) await new PostgresTokenStore({ pool, table: 'cli_tokens', key: user, encryptionKey: K1 }).set(TOKENS);
});
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

function expectNoSecrets(output: string): void {
  for (const secret of [K1, K2, 'cli-secret', 'pa55word']) expect(output).not.toContain(secret);
}

describe('postsched rekey --postgres-url', () => {
  it('counts with --dry-run (exit 1), rewrites (exit 0), then finds none left under a keyring without k1', async () => {
    const env = { POSTSCHED_TOKEN_KEYRING: KEYRING };
    const args = ['rekey', '--postgres-url', server.url, '--table', 'cli_tokens'];
    // The final keyring, too early: every value is unreadable with it; the dry run fails and names the count.
    const early = await runCli([...args, '--dry-run'], { POSTSCHED_TOKEN_KEYRING: JSON.stringify({ current: 'k2', keys: { k2: K2 } }) });
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/`encryptionKey` is missing a key: 3 of 3 stored values/);
    expect(early.output).not.toMatch(/can be removed/);
    const dry = await runCli([...args, '--dry-run'], env);
    expect(dry).toMatchObject({ code: 1, stdout: '3 token values in table "cli_tokens"; would rewrite 3 with key "k2".\n', stderr: '3 values are still under older keys.\n' });

    const run = await runCli(args, env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('3 rewritten with key "k2".');
    const k2Only = { current: 'k2', keys: { k2: K2 } };
    for (const user of ['a', 'b', 'c']) expect(await new PostgresTokenStore({ pool, table: 'cli_tokens', key: user, encryptionKey: k2Only }).get()).toEqual(TOKENS);

    const after = await runCli([...args, '--dry-run'], { POSTSCHED_TOKEN_KEYRING: JSON.stringify(k2Only) });
    expect(after).toMatchObject({ code: 0, stderr: '' });
    for (const output of [early.output, dry.output, run.output, after.output]) expectNoSecrets(output);
  });

  it.each([
    ['--postgres-url with --match', ['--postgres-url', 'postgresql://127.0.0.1:1/x', '--match', 'x:*'], /not both/],
    ['--table without --postgres-url', ['--match', 'x:*', '--table', 't'], /--table goes with --postgres-url/],
  ])('refuses %s (exit 2)', async (_, extra, message) => {
    const { code, stderr } = await runCli(['rekey', ...extra], { POSTSCHED_TOKEN_KEYRING: KEYRING, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it('fails in one line, typed, without the password, when PostgreSQL cannot be reached', async () => {
    const { code, stderr } = await runCli(['rekey', '--postgres-url', 'postgresql://u:pa55word@127.0.0.1:1/x'], { POSTSCHED_TOKEN_KEYRING: KEYRING });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^postsched rekey: SharedTokenStoreError: .*ECONNREFUSED/);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expectNoSecrets(stderr);
  });
});

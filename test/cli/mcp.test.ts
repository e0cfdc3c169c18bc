/**
 * `postsched mcp` as a child process, driven by the official MCP client: over stdio (as a desktop client starts it)
 * and over Streamable HTTP, acting for the user whose tokens `postsched login` saved, against the fake on 127.0.0.1.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { createTokenTable, PostgresTokenStore } from '@postsched/sdk/postgres';
import { Redis } from 'ioredis';
import pg from 'pg';
import { type PostgresServer, startPostgresServer } from '../postgres/postgres-server.js';
import { type RedisServer, startRedisServer } from '../redis/redis-server.js';
import { CLI, freePort, ROOT, runCli, type Running, startCli, stopAll } from '../support/processes.js';

const APP = { clientId: 'client_mcp', clientSecret: 'secret_mcp_cli', redirectUris: ['http://127.0.0.1:8976/callback'] };

/** `postsched mcp <args>` as a desktop client starts it, over stdio. */
function stdio(args: string[], env: Record<string, string>): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', CLI, 'mcp', ...args],
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
}

describe('postsched mcp', () => {
  let fake: FakeService;
  let dir: string;
  let tokens: string;
  let env: Record<string, string>;
  let client: Client | undefined;
  let server: Running | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postsched-mcp-'));
    fake = createFakeService({ apps: [APP] });
    const { url } = await fake.listen();
    env = { POSTSCHED_BASE_URL: url, POSTSCHED_CLIENT_ID: APP.clientId, POSTSCHED_CLIENT_SECRET: APP.clientSecret };
    tokens = join(dir, 'tokens.json');
    await writeFile(tokens, JSON.stringify(fake.issueTokenSet({ clientId: APP.clientId })), { mode: 0o600 });
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    await stopAll(server);
    server = undefined;
    await fake?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('over stdio: read-only by default, tools chosen by --allow and --exclude-tools, acting for the saved user', async () => {
    client = new Client({ name: 'test', version: '1' });
    await client.connect(stdio(['--tokens', tokens, '--allow', 'read,write', '--exclude-tools', 'upload_media_from_url'], env));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(['list_accounts', 'list_posts', 'get_post', 'get_post_analytics', 'next_slot', 'preview_post', 'schedule_post']);
    const scheduled = await client.callTool({ name: 'schedule_post', arguments: { account_ids: ['acc_demo_x'], publish_at: '2031-01-01T09:00:00Z', text: 'From MCP' } });
    expect(scheduled.isError).toBe(false);
    expect(fake.stats.postsCreated).toBe(1);
    const destructive = await client.callTool({ name: 'delete_post', arguments: { post_id: 'post_1' } });
    expect(destructive.isError).toBe(true); // not exposed without --allow destructive
  });

  it('refreshes an expired access token once and writes the rotated tokens back to the --tokens file', async () => {
    const expired = { ...fake.issueTokenSet({ clientId: APP.clientId }), expiresAt: Date.now() - 1_000 };
    await writeFile(tokens, JSON.stringify(expired), { mode: 0o600 });
    client = new Client({ name: 'test', version: '1' });
    await client.connect(stdio(['--tokens', tokens], env));
    for (let i = 0; i < 2; i++) expect((await client.callTool({ name: 'list_accounts', arguments: {} })).isError).toBe(false);
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);
    const saved = JSON.parse(await readFile(tokens, 'utf8')) as { accessToken: string; refreshToken: string };
    expect(saved.refreshToken).not.toBe(expired.refreshToken); // the rotated one: the spent one would log the user out
    expect(saved.accessToken).not.toBe(expired.accessToken);
  });

  it('over Streamable HTTP on 127.0.0.1: only the tools --tools names, and the MCP client\'s Authorization header never reaches the service', async () => {
    const port = await freePort();
    server = startCli(['mcp', '--tokens', tokens, '--http', '--port', String(port), '--tools', 'get_post,list_accounts'], env);
    await server.waitFor(/Streamable HTTP/);
    client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: 'Bearer mcp-client-secret-token' } } }));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list_accounts', 'get_post']); // --tools, in the tools' order
    const result = await client.callTool({ name: 'list_accounts', arguments: {} });
    expect(result.isError).toBe(false);
    expect(JSON.stringify(result)).not.toContain((JSON.parse(await readFile(tokens, 'utf8')) as { accessToken: string }).accessToken);
    // One request, answered: it carried the user's token (the fake refuses any other, the MCP client's included, with 401).
    expect(fake.stats.requests['GET /accounts']).toBe(1);
  });

  it('refuses a wrong command line with exit code 2', async () => {
    expect((await runCli(['mcp', '--allow', 'read,admin', '--tokens', tokens], env)).code).toBe(2);
    expect((await runCli(['mcp', '--tools', 'nope', '--tokens', tokens], env)).stderr).toContain('no tool "nope"');
    expect((await runCli(['mcp', '--user', 'u1'], env)).stderr).toContain('--redis-url or --postgres-url');
  });

  it('without the MCP SDK (an optional peer): mcp says how to install it, the other commands still run', async () => {
    // A resolve hook that finds no @modelcontextprotocol/sdk, as in an app that did not install it.
    const hooks = join(dir, 'hooks.mjs');
    await writeFile(hooks, `export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@modelcontextprotocol/')) throw Object.assign(new Error('Cannot find package ' + specifier), { code: 'ERR_MODULE_NOT_FOUND' });
  return next(specifier, context);
}`);
    const register = join(dir, 'no-mcp-sdk.mjs');
    await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});`);
    const withoutSdk = { ...env, NODE_OPTIONS: `--import ${pathToFileURL(register).href}` };
    for (const transport of [[], ['--http', '--port', '0']]) {
      const mcp = await runCli(['mcp', '--tokens', tokens, ...transport], withoutSdk);
      expect(mcp.code, mcp.stderr).toBe(1);
      expect(mcp.stderr).toContain('npm install @modelcontextprotocol/sdk');
    }
    expect((await runCli(['mock', '--help'], withoutSdk)).code).toBe(0);
  });

  it('--user acts for that user of the app\'s Redis store, its tokens read through UserClients', async () => {
    let redisServer: RedisServer | undefined;
    let redis: Redis | undefined;
    try {
      redisServer = await startRedisServer();
      redis = new Redis(redisServer.url);
      const encryptionKey = Buffer.alloc(32, 7).toString('base64');
      await new RedisTokenStore({ redis, key: 'app:tokens:{u42}', encryptionKey }).set(fake.issueTokenSet({ clientId: APP.clientId }));
      const keyring = JSON.stringify({ current: 'k', keys: { k: encryptionKey } });
      client = new Client({ name: 'test', version: '1' });
      await client.connect(stdio(['--user', 'u42', '--redis-url', redisServer.url, '--key', 'app:tokens:{u42}'], { ...env, POSTSCHED_TOKEN_KEYRING: keyring }));
      const result = await client.callTool({ name: 'list_accounts', arguments: {} });
      expect(result.isError, JSON.stringify(result)).toBe(false);
      expect(fake.stats.requests['GET /accounts']).toBe(1);
    } finally {
      await client?.close();
      client = undefined;
      redis?.disconnect();
      await redisServer?.stop();
    }
  });

  it('--user acts for that user of the app\'s PostgreSQL store: an expired token refreshed once, the rotated ones saved there', async () => {
    let pgServer: PostgresServer | undefined;
    let pool: pg.Pool | undefined;
    try {
      pgServer = await startPostgresServer();
      pool = new pg.Pool({ connectionString: pgServer.url, max: 2 });
      pool.on('error', () => {});
      await createTokenTable(pool, { table: 'mcp_tokens' });
      const encryptionKey = Buffer.alloc(32, 9).toString('base64');
      const store = new PostgresTokenStore({ pool, table: 'mcp_tokens', key: 'app:tokens:{u7}', encryptionKey });
      const expired = { ...fake.issueTokenSet({ clientId: APP.clientId }), expiresAt: Date.now() - 1_000 };
      await store.set(expired);
      const keyring = JSON.stringify({ current: 'k', keys: { k: encryptionKey } });
      client = new Client({ name: 'test', version: '1' });
      await client.connect(stdio(['--user', 'u7', '--postgres-url', pgServer.url, '--table', 'mcp_tokens', '--key', 'app:tokens:{u7}'], { ...env, POSTSCHED_TOKEN_KEYRING: keyring }));
      const result = await client.callTool({ name: 'list_accounts', arguments: {} });
      expect(result.isError, JSON.stringify(result)).toBe(false);
      expect(fake.stats.tokenRequests.refresh_token).toBe(1);
      expect((await store.get())?.refreshToken).not.toBe(expired.refreshToken);
    } finally {
      await client?.close();
      client = undefined;
      await pool?.end();
      await pgServer?.stop();
    }
  });
});

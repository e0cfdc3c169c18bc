/**
 * `postsched mcp` as a child process, driven by the official MCP client: over stdio (as a desktop client starts it)
 * and over Streamable HTTP, acting for the user whose tokens `postsched login` saved, against the fake on 127.0.0.1.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { Redis } from 'ioredis';
import { type RedisServer, startRedisServer } from '../redis/redis-server.js';
import { CLI, freePort, ROOT, runCli, type Running, startCli, stopAll } from '../support/processes.js';

const APP = { clientId: 'client_mcp', clientSecret: 'secret_mcp_cli', redirectUris: ['http://127.0.0.1:8976/callback'] };

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
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', CLI, 'mcp', '--tokens', tokens, '--allow', 'read,write', '--exclude-tools', 'upload_media_from_url'],
      cwd: ROOT,
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: 'pipe',
    });
    client = new Client({ name: 'test', version: '1' });
    await client.connect(transport);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(['list_accounts', 'list_posts', 'get_post', 'get_post_analytics', 'next_slot', 'preview_post', 'schedule_post']);
    const scheduled = await client.callTool({ name: 'schedule_post', arguments: { account_ids: ['acc_demo_x'], publish_at: '2031-01-01T09:00:00Z', text: 'From MCP' } });
    expect(scheduled.isError).toBe(false);
    expect(fake.stats.postsCreated).toBe(1);
    const destructive = await client.callTool({ name: 'delete_post', arguments: { post_id: 'post_1' } });
    expect(destructive.isError).toBe(true); // not exposed without --allow destructive
  });

  it('over Streamable HTTP on 127.0.0.1: the MCP client\'s Authorization header never reaches the service', async () => {
    const port = await freePort();
    server = startCli(['mcp', '--tokens', tokens, '--http', '--port', String(port)], env);
    await server.waitFor(/Streamable HTTP/);
    client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: 'Bearer mcp-client-secret-token' } } }));
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

  it('--user acts for that user of the app\'s Redis store, its tokens read through UserClients', async () => {
    let redisServer: RedisServer | undefined;
    let redis: Redis | undefined;
    try {
      redisServer = await startRedisServer();
      redis = new Redis(redisServer.url);
      const encryptionKey = Buffer.alloc(32, 7).toString('base64');
      await new RedisTokenStore({ redis, key: 'app:tokens:{u42}', encryptionKey }).set(fake.issueTokenSet({ clientId: APP.clientId }));
      const keyring = JSON.stringify({ current: 'k', keys: { k: encryptionKey } });
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', CLI, 'mcp', '--user', 'u42', '--redis-url', redisServer.url, '--key', 'app:tokens:{u42}'],
        cwd: ROOT,
        env: { ...(process.env as Record<string, string>), ...env, POSTSCHED_TOKEN_KEYRING: keyring },
        stderr: 'pipe',
      });
      client = new Client({ name: 'test', version: '1' });
      await client.connect(transport);
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
});

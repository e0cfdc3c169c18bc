/**
 * `postsched mcp`: an MCP server acting for one user, on stdio (a desktop client starts it) or Streamable HTTP
 * (self-hosted, 127.0.0.1 by default). The user's tokens come from the file `postsched login` saved, or from the
 * app's Redis or PostgreSQL store (`--user`); refresh and locking go through `UserClients`, as in any app. The MCP
 * client's own credentials (an `Authorization` header over HTTP) are never read, let alone sent to the service.
 */
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { ValidationError } from '../core/errors.js';
import { SDK_VERSION } from '../core/user-agent.js';
import { OAuthClient } from '../oauth/oauth-client.js';
import { parseTokenSet } from '../oauth/token-set.js';
import type { TokenSet, TokenStore } from '../oauth/types.js';
import type { PgPoolLike } from '../postgres/pg-connection.js';
import { PostgresTokenStore } from '../postgres/postgres-token-store.js';
import type { RedisClientLike } from '../redis/redis-connection.js';
import { RedisTokenStore } from '../redis/redis-token-store.js';
import { postschedTools } from '../tools/index.js';
import type { PostschedTool, ToolAccess } from '../tools/define.js';
import { UserClients } from '../user-clients.js';
import { aborted, CliError, type Command, EXIT, parse, port, required, UsageError } from './command.js';
import { saveTokens } from './login.js';
import { mcpSdk, toolsServer } from './mcp-server.js';
import { MOCK_DEFAULTS } from './mock.js';
import { connect, connectPostgres, KEYRING_VAR, parseKeyring } from './rekey.js';

const HELP = `Usage: postsched mcp [options]

An MCP server with the Post Scheduling Service's tools (docs/agents.md), acting for one user.
Read-only unless --allow says otherwise; destructive tools act only with a confirmation from a preview.
Needs @modelcontextprotocol/sdk installed beside @postsched/sdk.

The user:
  --tokens <file>         The TokenSet "postsched login" saved (default tokens.json); refreshed tokens
                          are written back to it
  --user <id>             Or: this user of the app's token store, with --redis-url or --postgres-url
  --redis-url <url>       RedisTokenStore's server
  --postgres-url <url>    PostgresTokenStore's database; --table (default postsched_tokens)
  --key <key>             The store's key of that user, as your app names it (default
                          postsched:tokens:{<id>})
                          The store's encryption keyring comes from $${KEYRING_VAR} when set.
  --base-url <url>        The service ($POSTSCHED_BASE_URL)
  --client-id <id>        Your app's client id ($POSTSCHED_CLIENT_ID), for refreshing
  --client-secret <s>     Its secret ($POSTSCHED_CLIENT_SECRET; prefer the variable)

The tools:
  --allow <list>          read, write, destructive (default read)
  --tools <list>          Only these tools (names, comma-separated)
  --exclude-tools <list>  All but these

The transport:
  --http                  Streamable HTTP on /mcp instead of stdio
  --host <addr>           With --http (default 127.0.0.1). Put anything else behind your app's auth
  --port <n>              With --http (default 3333; 0 picks a free one)
  -h, --help              This help

Exit code 0 after Ctrl-C or when the client closes stdio, 1 when it cannot start.`;

export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'an MCP server with the service\'s tools, acting for one user (stdio or HTTP)',
  help: HELP,
  async run(args, context) {
    const { values } = parse(args, {
      tokens: { type: 'string' }, user: { type: 'string' }, 'redis-url': { type: 'string' }, 'postgres-url': { type: 'string' },
      key: { type: 'string' }, table: { type: 'string' }, 'base-url': { type: 'string' }, 'client-id': { type: 'string' },
      'client-secret': { type: 'string' }, allow: { type: 'string' }, tools: { type: 'string' }, 'exclude-tools': { type: 'string' },
      http: { type: 'boolean' }, host: { type: 'string' }, port: { type: 'string' },
    });
    if (values.help === true) {
      context.out(HELP);
      return EXIT.ok;
    }
    const { env } = context;
    const allow = list(values.allow ?? 'read') as ToolAccess[];
    if (values.http !== true && (values.host !== undefined || values.port !== undefined)) throw new UsageError('--host and --port go with --http');
    const user = values.user;
    if (user === undefined && (values['redis-url'] ?? values['postgres-url'] ?? values.key ?? values.table) !== undefined) throw new UsageError('--redis-url, --postgres-url, --key and --table go with --user <id>');
    if (user !== undefined && values.tokens !== undefined) throw new UsageError('pass --tokens or --user, not both');
    if (user !== undefined && (values['redis-url'] === undefined) === (values['postgres-url'] === undefined)) throw new UsageError('--user needs one store: --redis-url or --postgres-url');

    const baseUrl = required('base-url', values['base-url'], 'POSTSCHED_BASE_URL', env);
    let oauth: OAuthClient;
    let tools: PostschedTool[];
    const store = await openStore(values, user, env);
    try {
      oauth = new OAuthClient({
        baseUrl,
        clientId: required('client-id', values['client-id'], 'POSTSCHED_CLIENT_ID', env),
        clientSecret: required('client-secret', values['client-secret'], 'POSTSCHED_CLIENT_SECRET', env),
        redirectUri: MOCK_DEFAULTS.redirectUris[1], // unused: this command only refreshes
      });
      const users = new UserClients({ oauth, baseUrl, store: () => store.store });
      tools = choose(postschedTools(users.client(user ?? 'postsched-mcp'), { allow, media: { lookup: resolveHost } }), values.tools, values['exclude-tools']);
    } catch (error) {
      store.close();
      if (error instanceof ValidationError) throw new UsageError(error.message);
      throw error;
    }
    const version = SDK_VERSION;
    try {
      if (values.http !== true) {
        const server = await toolsServer(tools, version); // first: without the MCP SDK, it says how to install it
        const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
        const closed = new Promise<void>((done) => (server.onclose = done));
        await server.connect(new StdioServerTransport());
        context.err(`postsched mcp: ${tools.length} tools (${allow.join(', ')}) on stdio.`); // stdout is the protocol's
        await Promise.race([closed, aborted(context.signal)]);
        await server.close();
        return EXIT.ok;
      }
      const host = values.host ?? '127.0.0.1';
      const http = await serveHttp(tools, version, host, port('port', values.port ?? '3333'));
      context.err(`postsched mcp: ${tools.length} tools (${allow.join(', ')}) on ${http.url} (Streamable HTTP).`);
      if (!['127.0.0.1', '::1', 'localhost'].includes(host)) context.err('postsched mcp: not on loopback: anyone who reaches this port acts as the user. Put it behind your app\'s auth (docs/agents.md).');
      await aborted(context.signal);
      await http.close();
      return EXIT.ok;
    } finally {
      store.close();
    }
  },
};

/** A host's addresses, so that upload_media_from_url refuses a public name that points at a private address. */
const resolveHost = async (hostname: string) => (await lookup(hostname, { all: true })).map((a) => a.address);

function list(value: string): string[] {
  return [...new Set(value.split(/[\s,]+/).filter((s) => s !== ''))];
}

/** The tools `--tools` keeps and `--exclude-tools` leaves out; an unknown name is a usage error. */
function choose(tools: PostschedTool[], only: string | undefined, exclude: string | undefined): PostschedTool[] {
  const names = tools.map((t) => t.name);
  for (const name of [...list(only ?? ''), ...list(exclude ?? '')]) {
    if (!names.includes(name)) throw new UsageError(`no tool ${JSON.stringify(name.slice(0, 64))} among those --allow gives: ${names.join(', ')}`);
  }
  const kept = only === undefined ? tools : tools.filter((t) => list(only).includes(t.name));
  return kept.filter((t) => !list(exclude ?? '').includes(t.name));
}

/** The user's store: the login file, or the app's Redis or PostgreSQL store. */
async function openStore(values: Record<string, string | boolean | undefined>, user: string | undefined, env: NodeJS.ProcessEnv): Promise<{ store: TokenStore; close(): void }> {
  if (user === undefined) return { store: fileStore(resolve((values.tokens as string | undefined) ?? 'tokens.json')), close: () => {} };
  const key = (values.key as string | undefined) ?? `postsched:tokens:{${user}}`;
  // The store's key, as `rekey` takes it: never from the command line; a store kept in clear says so (`"none"`).
  const text = env[KEYRING_VAR];
  if (text === undefined) throw new UsageError(`--user reads the store with its key: set ${KEYRING_VAR} to the keyring as JSON ({"current":"k1","keys":{"k1":"<base64>"}}), or to "\"none\"" for a store kept in clear`);
  const keyring = { encryptionKey: parseKeyring(text) };
  if (values['redis-url'] !== undefined) {
    const redis = await connect(values['redis-url'] as string);
    return { store: new RedisTokenStore({ redis: redis.client as RedisClientLike, key, ...keyring }), close: redis.close };
  }
  const pg = await connectPostgres(values['postgres-url'] as string);
  const table = values.table === undefined ? {} : { table: values.table as string };
  return { store: new PostgresTokenStore({ pool: pg.client as PgPoolLike, key, ...table, ...keyring }), close: pg.close };
}

/** The TokenSet file `postsched login` writes; refreshed tokens are saved back the same way (0600, atomic). */
function fileStore(path: string): TokenStore {
  return {
    async get() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as { code?: unknown }).code === 'ENOENT') throw new CliError(`no tokens at ${path}: run "postsched login" first, or pass --tokens <file>`);
        throw error;
      }
      return parseTokenSet(JSON.parse(text) as unknown, path);
    },
    async set(tokens: TokenSet) {
      await saveTokens(path, tokens);
    },
  };
}

/**
 * Streamable HTTP on `/mcp`, stateless: each request gets its own transport and server over the same tools (so a
 * confirmation made in one request is valid in the next). DNS rebinding protection on loopback.
 */
async function serveHttp(tools: PostschedTool[], version: string, host: string, listenPort: number): Promise<{ url: string; close(): Promise<void> }> {
  await mcpSdk();
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  let allowedHosts: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('postsched mcp serves /mcp\n');
      return;
    }
    const server = await toolsServer(tools, version);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined as unknown as () => string, enableDnsRebindingProtection: allowedHosts.length > 0, allowedHosts });
    res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('postsched mcp: internal error\n');
    });
  });
  await new Promise<void>((ready, fail) => {
    http.once('error', (error: NodeJS.ErrnoException) => fail(error.code === 'EADDRINUSE' ? new CliError(`port ${listenPort} of ${host} is in use: pass another --port`) : error));
    http.listen(listenPort, host, () => ready());
  });
  const address = http.address();
  const actual = typeof address === 'object' && address !== null ? address.port : listenPort;
  if (['127.0.0.1', '::1', 'localhost'].includes(host)) allowedHosts = [`127.0.0.1:${actual}`, `localhost:${actual}`, `[::1]:${actual}`];
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}/mcp`,
    close: () => new Promise<void>((done) => { http.close(() => done()); http.closeAllConnections(); }),
  };
}

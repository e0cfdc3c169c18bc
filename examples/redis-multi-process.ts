/**
 * A server running as several Node processes (node:cluster) that share each user's tokens through Redis.
 * When a user's access token expires, one process refreshes it and every other process uses the result:
 * with rotating refresh tokens, two processes refreshing at once would log the user out.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 \
 *   POSTSCHED_BASE_URL=https://api.postsched.example \
 *   POSTSCHED_CLIENT_ID=… POSTSCHED_CLIENT_SECRET=… \
 *   POSTSCHED_REDIRECT_URI=https://app.example/oauth/callback \
 *   TOKEN_ENCRYPTION_KEY="$(openssl rand -base64 32)" \
 *   WORKERS=4 PORT=3000 npx tsx examples/redis-multi-process.ts
 *
 * GET /users/{userId}/accounts answers with the user's connected accounts, read with the user's tokens.
 * Tokens get into Redis through your OAuth callback route, which ends with
 * `await tokensFor(userId).setTokens(await oauth.exchangeCode(callbackUrl, pending))`.
 */
import cluster from 'node:cluster';
import { createServer, type ServerResponse } from 'node:http';
import { availableParallelism } from 'node:os';
import { Redis } from 'ioredis';
import { OAuthClient, PostSched, ReauthorizationRequiredError, TokenManager, TokenStoreError } from '@postsched/sdk';
import { RedisTokenStore, TokenStoreUnavailableError } from '@postsched/sdk/redis';

function env(name: string, fallback?: string): string {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`Set ${name} (see the top of examples/redis-multi-process.ts).`);
  return value;
}

if (cluster.isPrimary) {
  const workers = Number(env('WORKERS', String(availableParallelism())));
  const host = env('HOST', '127.0.0.1');
  let shuttingDown = false;
  let listening = 0;
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on('listening', (_worker, address) => {
    // Every worker shares one port (with PORT=0, one random port): announce it once all are ready.
    if (++listening === workers) console.log(`listening on http://${host}:${address.port} (${workers} workers)`);
  });
  cluster.on('exit', (worker, code, signal) => {
    if (shuttingDown) return;
    console.error(`worker ${worker.process.pid} died (${signal ?? code}); starting another`);
    cluster.fork();
  });
  const shutdown = () => {
    shuttingDown = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    let left = Object.keys(cluster.workers ?? {}).length;
    if (left === 0) process.exit(0);
    cluster.on('exit', () => --left === 0 && process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
} else {
  const baseUrl = env('POSTSCHED_BASE_URL');
  // One Redis connection per process, shared by every user's store. Errors are reported by the stores
  // (TokenStoreUnavailableError); this listener only keeps reconnect noise out of the process's crash path.
  const redis = new Redis(env('REDIS_URL'));
  redis.on('error', () => {});
  const oauth = new OAuthClient({
    baseUrl,
    clientId: env('POSTSCHED_CLIENT_ID'),
    clientSecret: env('POSTSCHED_CLIENT_SECRET'),
    redirectUri: env('POSTSCHED_REDIRECT_URI', 'http://127.0.0.1:3000/oauth/callback'),
  });
  const encryptionKey = env('TOKEN_ENCRYPTION_KEY');

  // One TokenManager per user and process: it keeps the user's fresh access token in memory, so most calls
  // touch neither Redis nor the service. Use an LRU cache instead of a Map when users are many.
  const managers = new Map<string, { tokens: TokenManager; client: PostSched }>();
  const tokensFor = (userId: string) => {
    let entry = managers.get(userId);
    if (entry === undefined) {
      const store = new RedisTokenStore({ redis, key: `postsched:tokens:${userId}`, encryptionKey });
      const tokens = new TokenManager({ oauth, store });
      entry = { tokens, client: new PostSched({ baseUrl, auth: tokens }) };
      managers.set(userId, entry);
    }
    return entry;
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };

  const server = createServer(async (req, res) => {
    const match = /^\/users\/([A-Za-z0-9_-]{1,64})\/accounts$/.exec(req.url ?? '');
    if (req.method !== 'GET' || match === null) return send(res, 404, { error: 'not_found' });
    try {
      const accounts = await tokensFor(match[1] as string).client.accounts.list().toArray();
      send(res, 200, { worker: process.pid, accounts });
    } catch (error) {
      if (error instanceof ReauthorizationRequiredError) {
        // The refresh token is gone or refused: only the user can fix it, by authorizing again.
        return send(res, 401, { error: 'reauthorization_required', login: '/oauth/login' });
      }
      if (error instanceof TokenStoreUnavailableError || error instanceof TokenStoreError) {
        // Redis is down or slow (LockTimeoutError included): nothing was lost, ask the caller to retry.
        return send(res, 503, { error: 'token_store_unavailable' }, { 'retry-after': '1' });
      }
      // SDK errors never hold a token, so logging the name and message is safe.
      console.error(`GET ${req.url}: ${(error as Error).name}: ${(error as Error).message}`);
      send(res, 502, { error: 'upstream_failed' });
    }
  });
  server.listen(Number(env('PORT', '3000')), env('HOST', '127.0.0.1'));

  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void redis.quit().finally(() => process.exit(0));
  });
}

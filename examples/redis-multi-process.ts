/**
 * A server running as several Node processes (node:cluster) that share each user's tokens through Redis.
 * When a user's access token expires, one process refreshes it and every other process uses the result:
 * with rotating refresh tokens, two processes refreshing at once would log the user out.
 *
 * Needs a Redis server (6.2 or newer) and the ioredis client:
 *   sudo apt-get install redis-server   # Debian/Ubuntu: starts one on 127.0.0.1:6379
 *   brew install redis && brew services start redis   # macOS
 *   npm install @postsched/sdk ioredis && npm install -D tsx
 *
 * Against the local mock of the service (in a clone of this repository, `npm run mock` instead of `npx postsched mock`):
 *   npx postsched mock                                       # terminal 1: paste its export lines into terminal 2
 *   REDIS_URL=redis://127.0.0.1:6379 TOKEN_ENCRYPTION_KEY="$(openssl rand -base64 32)" \
 *     npx tsx examples/redis-multi-process.ts                 # terminal 2
 * then open http://127.0.0.1:3000/users/user_1/login (Allow), which lands on /users/user_1/accounts.
 *
 * Against a real service, set POSTSCHED_BASE_URL, POSTSCHED_CLIENT_ID, POSTSCHED_CLIENT_SECRET and
 * POSTSCHED_REDIRECT_URI (registered for the app, ending in /callback; default http://127.0.0.1:3000/callback)
 * yourself; WORKERS (default: one per core), PORT (3000) and HOST (127.0.0.1) are optional.
 *
 * Routes: GET /users/{userId}/login starts the OAuth flow for that user, GET /callback finishes it (any
 * worker may get it: the pending login waits in Redis), GET /users/{userId}/accounts answers with the user's
 * accounts, read with the user's tokens. In your app the user id comes from your session, not from the URL.
 */
import cluster from 'node:cluster';
import { createServer, type ServerResponse } from 'node:http';
import { availableParallelism } from 'node:os';
import { Redis } from 'ioredis';
import { OAuthClient, OAuthError, ReauthorizationRequiredError, TokenStoreError, UserClients, type Scope } from '@postsched/sdk';
import { RedisTokenStore } from '@postsched/sdk/redis';

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
  // (SharedTokenStoreError, a TokenStoreError); this listener only keeps reconnect noise out of the process's crash path.
  const redis = new Redis(env('REDIS_URL'));
  redis.on('error', () => {});
  const oauth = new OAuthClient({
    baseUrl,
    clientId: env('POSTSCHED_CLIENT_ID'),
    clientSecret: env('POSTSCHED_CLIENT_SECRET'),
    redirectUri: env('POSTSCHED_REDIRECT_URI', 'http://127.0.0.1:3000/callback'),
  });
  const callbackPath = new URL(oauth.redirectUri).pathname;
  const scopes: Scope[] = ['accounts:read'];
  const encryptionKey = env('TOKEN_ENCRYPTION_KEY');

  // One UserClients per process: a client per user, whose fresh access token stays in memory, so most calls touch
  // neither Redis nor the service. At most maxUsers are cached (least recently used dropped, never mid-refresh);
  // a dropped user's tokens stay in Redis and are read again on their next request. The braces in the key are a
  // Redis Cluster hash tag: the tokens and their lock land in one slot.
  const users = new UserClients({
    oauth,
    baseUrl,
    store: (userId) => new RedisTokenStore({ redis, key: `postsched:tokens:{${userId}}`, encryptionKey }),
    maxUsers: 10_000,
  });

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };

  // A login started by one worker may come back to another: its state and PKCE verifier wait in Redis, 10 minutes
  // at most, and are read once (GETDEL), so a replayed callback finds nothing.
  const pendingKey = (state: string) => `postsched:login:${state}`;

  const login = async (userId: string, res: ServerResponse) => {
    const { url, state, codeVerifier } = await oauth.createAuthorizationUrl({ scopes });
    await redis.set(pendingKey(state), JSON.stringify({ userId, state, codeVerifier }), 'PX', 600_000);
    res.writeHead(302, { location: url }).end();
  };

  const callback = async (url: URL, res: ServerResponse) => {
    const state = url.searchParams.get('state') ?? '';
    const saved = state === '' ? null : await redis.getdel(pendingKey(state));
    if (saved === null) return send(res, 400, { error: 'unknown_or_expired_login' });
    const pending = JSON.parse(saved) as { userId: string; state: string; codeVerifier: string };
    try {
      await users.connect(pending.userId, await oauth.exchangeCode(url.searchParams, { ...pending, scopes }));
    } catch (error) {
      // access_denied (the user said no), a replayed or forged callback: nothing was stored.
      if (error instanceof OAuthError) return send(res, 400, { error: error.error });
      throw error;
    }
    res.writeHead(302, { location: `/users/${pending.userId}/accounts` }).end();
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1'); // only its path and query are read
    const match = /^\/users\/([A-Za-z0-9_-]{1,64})\/(accounts|login)$/.exec(url.pathname);
    if (req.method !== 'GET' || (match === null && url.pathname !== callbackPath)) return send(res, 404, { error: 'not_found' });
    try {
      if (match === null) return await callback(url, res);
      if (match[2] === 'login') return await login(match[1] as string, res);
      const accounts = await users.client(match[1] as string).accounts.list().toArray();
      send(res, 200, { worker: process.pid, accounts });
    } catch (error) {
      if (error instanceof ReauthorizationRequiredError) {
        // The refresh token is gone or refused: only the user can fix it, by authorizing again.
        return send(res, 401, { error: 'reauthorization_required', login: `/users/${match?.[1]}/login` });
      }
      if (error instanceof TokenStoreError) {
        // Redis is down or slow (a lock wait past lockWaitMs included): nothing was lost, ask the caller to retry.
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
    // Refreshes in flight finish and are stored in Redis before the connection closes.
    void users[Symbol.asyncDispose]()
      .then(() => redis.quit())
      .finally(() => process.exit(0));
  });
}

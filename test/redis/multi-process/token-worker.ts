/**
 * One process of a fleet, forked by the multi-process tests through tsx: a TokenManager on a RedisTokenStore
 * shared with the other processes, driven over IPC.
 *
 * Config (env WORKER_CONFIG, JSON): see `WorkerConfig`. Messages: it sends `ready`, then on `go` makes
 * `calls` concurrent `getAccessToken()` calls and sends `done` with what its callers saw. The `die-*` modes
 * stop at a point of the refresh and say so (`holding-lock`, `refreshed-unsaved`), so the test can SIGKILL
 * the process exactly there.
 */
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { OAuthClient, type TokenSet, type TokenStore, TokenManager } from '@postsched/sdk';
import { type RedisClientLike, RedisTokenStore } from '@postsched/sdk/redis';
import { TEST_KEY } from '../../support/token-key.js';

export interface WorkerConfig {
  client: 'ioredis' | 'node-redis';
  redisUrl: string;
  key: string;
  lockTtlMs: number;
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  calls: number;
  /** `die-holding-lock`: takes the lock, then waits to be killed before any token request leaves.
   *  `die-before-set`: the token request completes (the service rotated the refresh token), then it waits to be
   *  killed before storing the answer. */
  mode: 'normal' | 'die-holding-lock' | 'die-before-set';
}

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'holding-lock' }
  | { type: 'refreshed-unsaved' }
  | { type: 'done'; succeeded: number; accessTokens: string[]; errors: Record<string, number> };

const config = JSON.parse(process.env['WORKER_CONFIG'] ?? '{}') as WorkerConfig;
const send = (message: WorkerMessage) => process.send?.(message);
const never = () => new Promise<never>(() => {});

async function connect(): Promise<{ redis: RedisClientLike; close: () => void }> {
  if (config.client === 'ioredis') {
    const redis = new Redis(config.redisUrl);
    return { redis, close: () => redis.disconnect() };
  }
  const redis = createClient({ url: config.redisUrl });
  redis.on('error', () => {});
  await redis.connect();
  return { redis, close: () => redis.destroy() };
}

/** The store as the manager sees it, with the pause points of the `die-*` modes. */
function hooked(store: RedisTokenStore): TokenStore {
  if (config.mode === 'die-holding-lock') {
    return {
      get: () => store.get(),
      set: (tokens: TokenSet) => store.set(tokens),
      lock: <T>(_fn: () => Promise<T>) =>
        store.lock(async () => {
          send({ type: 'holding-lock' });
          return never();
        }),
    };
  }
  if (config.mode === 'die-before-set') {
    return {
      get: () => store.get(),
      set: async () => {
        send({ type: 'refreshed-unsaved' });
        return never();
      },
      lock: (fn) => store.lock(fn),
    };
  }
  return store;
}

const { redis, close } = await connect();
const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: config.key, lockTtlMs: config.lockTtlMs, lockWaitMs: 60_000 });
const oauth = new OAuthClient({
  baseUrl: config.baseUrl,
  clientId: config.clientId,
  clientSecret: config.clientSecret,
  redirectUri: 'http://127.0.0.1/callback',
});
const manager = new TokenManager({ oauth, store: hooked(store) });

process.on('message', async (message: { type: string }) => {
  if (message.type === 'exit') {
    close();
    process.exit(0);
  }
  if (message.type !== 'go') return;
  const results = await Promise.allSettled(Array.from({ length: config.calls }, () => manager.getAccessToken()));
  const errors: Record<string, number> = {};
  const accessTokens = new Set<string>();
  let succeeded = 0;
  for (const result of results) {
    if (result.status === 'fulfilled') {
      succeeded++;
      accessTokens.add(result.value);
    } else {
      const name = result.reason instanceof Error ? result.reason.name : typeof result.reason;
      errors[name] = (errors[name] ?? 0) + 1;
    }
  }
  send({ type: 'done', succeeded, accessTokens: [...accessTokens], errors });
});
send({ type: 'ready' });

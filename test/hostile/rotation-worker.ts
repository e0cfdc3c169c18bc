/**
 * One process of the two-process rotation tests (forked through tsx): a TokenManager on a RedisTokenStore shared
 * with the other process, against the fake service, driven over IPC one call at a time.
 *
 * Config (env WORKER_CONFIG, JSON): see `RotationWorkerConfig`. In: `{ type: 'get' }`, `{ type: 'force', token }`,
 * `{ type: 'continue' }`, `{ type: 'exit' }`. Out: `ready`, `paused` (mode pause-after-refresh), and `result`.
 */
import { Redis } from 'ioredis';
import { OAuthClient, TokenManager, type TokenSet, type TokenStore } from '@postsched/sdk';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { TEST_KEY } from '../support/token-key.js';

export interface RotationWorkerConfig {
  redisUrl: string;
  key: string;
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** `fail-on-tokens-once`: the first onTokens throws. `set-lands-then-fails-once`: the first set writes, then
   *  throws as a timed-out command would. `pause-after-refresh`: the first refresh's answer is held until `continue`. */
  mode: 'normal' | 'fail-on-tokens-once' | 'set-lands-then-fails-once' | 'pause-after-refresh';
}

export type RotationWorkerMessage =
  | { type: 'ready' }
  | { type: 'paused' }
  | { type: 'result'; ok: true; accessToken: string }
  | { type: 'result'; ok: false; error: string };

const config = JSON.parse(process.env['WORKER_CONFIG'] ?? '{}') as RotationWorkerConfig;
const send = (message: RotationWorkerMessage) => process.send?.(message);

const redis = new Redis(config.redisUrl);
const redisStore = new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: config.key, lockTtlMs: 2_000, lockWaitMs: 20_000 });
let firstSet = true;
const store: TokenStore = {
  get: () => redisStore.get(),
  lock: (fn) => redisStore.lock(fn),
  async set(tokens, options) {
    const result = await redisStore.set(tokens, options);
    if (config.mode === 'set-lands-then-fails-once' && firstSet) {
      firstSet = false;
      throw new Error('Command timed out (it reached Redis all the same)');
    }
    return result;
  },
};

const oauth = new OAuthClient({ baseUrl: config.baseUrl, clientId: config.clientId, clientSecret: config.clientSecret, redirectUri: 'http://127.0.0.1/callback' });
let release: (() => void) | undefined;
let firstRefresh = true;
const refresher = {
  async refresh(previous: TokenSet): Promise<TokenSet> {
    const fresh = await oauth.refresh(previous);
    if (config.mode === 'pause-after-refresh' && firstRefresh) {
      firstRefresh = false;
      send({ type: 'paused' });
      await new Promise<void>((resolve) => (release = resolve));
    }
    return fresh;
  },
};
let failOnTokens = config.mode === 'fail-on-tokens-once';
const manager = new TokenManager({
  oauth: refresher,
  store,
  onTokens: () => {
    if (failOnTokens) {
      failOnTokens = false;
      throw new Error('database unavailable');
    }
  },
});

process.on('message', (message: { type: string; token?: string }) => {
  if (message.type === 'exit') {
    redis.disconnect();
    process.exit(0);
  }
  if (message.type === 'continue') {
    release?.();
    return;
  }
  const call = message.type === 'force' ? manager.forceRefresh(message.token ?? '') : manager.getAccessToken();
  call.then(
    (accessToken) => send({ type: 'result', ok: true, accessToken }),
    (error: unknown) => send({ type: 'result', ok: false, error: error instanceof Error ? error.name : String(error) }),
  );
});
send({ type: 'ready' });

/**
 * A process that does what the README's SIGTERM handler does while Redis is gone: a user's refresh was obtained, its
 * save fails (and goes on being retried inside the lock), `dispose` is called, then the Redis client is quit. It must
 * exit by itself. Prints the dispose outcome as one JSON line. Env: REDIS_URL.
 */
import { Redis } from 'ioredis';
import { type TokenSet, UserClients } from '@postsched/sdk';
import { RedisTokenStore } from '@postsched/sdk/redis';

const redis = new Redis(process.env['REDIS_URL'] as string);
let down = false;
// Every command fails once Redis is "gone" (its connection closed).
const failing = { call: (...args: [string, ...string[]]) => (down ? Promise.reject(new Error('Connection is closed.')) : redis.call(...args)) };
const oauth = {
  async refresh(previous: TokenSet): Promise<TokenSet> {
    down = true; // the service answered; Redis goes away before the answer is saved
    return { ...previous, accessToken: 'at_2', refreshToken: 'rt_2', expiresAt: Date.now() + 3_600_000 };
  },
};
const users = new UserClients({
  oauth,
  baseUrl: 'http://127.0.0.1:9',
  store: (userId) => new RedisTokenStore({ redis: failing as never, key: `exit:{${userId}}`, lockTtlMs: 300, encryptionKey: Buffer.alloc(32, 5) }),
  managerOptions: { storeTimeoutMs: 200 },
});
await users.connect('alice', { accessToken: 'at_1', refreshToken: 'rt_1', expiresAt: Date.now() - 1_000, scopes: ['posts:read'], tokenType: 'bearer' });
const call = await users.manager('alice').getAccessToken().catch((e: unknown) => e);
const disposed = await users[Symbol.asyncDispose]().then(
  () => ({ name: 'none', message: '' }),
  (e: Error) => ({ name: e.name, message: e.message }),
);
console.log(JSON.stringify({ call: (call as Error).name, disposed }));
await redis.quit();

/**
 * One process of the retry-budget fleet (retry-budget-fleet.test.ts): one `PostSched` with a `RedisRateLimiter` on
 * the shared Redis. On `{ type: 'run', ids }` it GETs each post id, 10 at a time, and sends `done` with the calls
 * that succeeded and failed, once Redis has done every command the limiter sent it. Config: env WORKER_CONFIG (JSON: baseUrl, redisUrl, prefix).
 */
import { Redis } from 'ioredis';
import { PostSched } from '@postsched/sdk';
import { RedisRateLimiter } from '@postsched/sdk/redis';

const config = JSON.parse(process.env['WORKER_CONFIG'] ?? '{}') as { baseUrl: string; redisUrl: string; prefix: string };
const redis = new Redis(config.redisUrl);
// A Redis slow on a busy machine must not send this process to its own budget (fail open): the test counts the shared one.
const rateLimiter = new RedisRateLimiter({ redis, prefix: config.prefix, commandTimeoutMs: 60_000 });
const client = new PostSched({ baseUrl: config.baseUrl, auth: 'tok_fleet', rateLimiter });

process.on('message', async (message: { type: 'run'; ids: string[] } | { type: 'exit' }) => {
  if (message.type === 'exit') {
    await rateLimiter.close();
    redis.disconnect();
    process.exit(0);
  }
  const result = { type: 'done' as const, ok: 0, failed: 0 };
  const queue = [...message.ids];
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        await client.posts.get(id).then(() => result.ok++, () => result.failed++);
      }
    }),
  );
  // Whatever the limiter sent Redis on this connection is done once this answers (one connection keeps its order).
  await redis.ping();
  process.send?.(result);
});
process.send?.({ type: 'ready' });

/**
 * One webhook receiver of a fleet, forked by fleet.test.ts through tsx: `createWebhookHandler(...).node` on
 * node:http (127.0.0.1, a free port) with a RedisWebhookDedupe shared by every receiver. Config: env WORKER_CONFIG
 * (`ReceiverConfig`). It sends `ready` with its port, `succeeded` each time a handler finished, `holding` when the
 * handler of `hangOn` started (it then never finishes: the test kills the process there).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { RedisWebhookDedupe, type RedisClientLike } from '@postsched/sdk/redis';
import { createWebhookHandler, type WebhookHandlerOptions } from '@postsched/sdk/webhooks';

export interface ReceiverConfig {
  client: 'ioredis' | 'node-redis';
  redisUrl: string;
  prefix: string;
  secret: string;
  /** Events whose post id ends with this digit fail on their first run anywhere in the fleet (counted in Redis). */
  failFirstRunDigit?: string;
  /** The post id whose handler never finishes here. */
  hangOn?: string;
  bounds?: Pick<WebhookHandlerOptions, 'handlerTimeoutMs' | 'dedupeTimeoutMs' | 'inFlightTtlMs'>;
}

export type ReceiverMessage =
  | { type: 'ready'; port: number }
  | { type: 'succeeded'; id: string; pid: number }
  | { type: 'holding'; id: string };

const config = JSON.parse(process.env['WORKER_CONFIG'] ?? '{}') as ReceiverConfig;
const send = (message: ReceiverMessage) => process.send?.(message);

async function connect(): Promise<{ redis: RedisClientLike; call: (...args: string[]) => Promise<unknown>; close: () => void }> {
  if (config.client === 'ioredis') {
    const redis = new Redis(config.redisUrl);
    return { redis, call: (command, ...args) => redis.call(command!, ...args), close: () => redis.disconnect() };
  }
  const redis = createClient({ url: config.redisUrl });
  redis.on('error', () => {});
  await redis.connect();
  return { redis, call: (...args) => redis.sendCommand(args), close: () => redis.destroy() };
}

const { redis, call, close } = await connect();
const webhooks = createWebhookHandler({
  secret: config.secret,
  dedupe: new RedisWebhookDedupe({ redis, prefix: config.prefix }),
  ...config.bounds,
  onError: () => {},
  on: {
    'post.published': async (event) => {
      const id = event.data.id;
      if (id === config.hangOn) {
        send({ type: 'holding', id });
        return new Promise<never>(() => {});
      }
      // The app's own work: a shared counter, and a pause so that duplicates meet runs in flight.
      const run = await call('INCR', `${config.prefix}:test-runs:${id}`);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
      if (run === 1 && config.failFirstRunDigit !== undefined && id.endsWith(config.failFirstRunDigit)) {
        await new Promise((resolve) => setTimeout(resolve, 30)); // a downstream call that times out
        throw new Error('first run fails');
      }
      send({ type: 'succeeded', id, pid: process.pid });
    },
  },
});

const server = createServer(webhooks.node);
server.listen(0, '127.0.0.1', () => send({ type: 'ready', port: (server.address() as AddressInfo).port }));
process.on('message', (message: { type: string }) => {
  if (message.type !== 'exit') return;
  server.closeAllConnections();
  server.close(() => {
    close();
    process.exit(0);
  });
});

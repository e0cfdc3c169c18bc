/**
 * One webhook receiver of a fleet, forked by fleet.test.ts through tsx: `createWebhookHandler(...).node` on
 * node:http (127.0.0.1, a free port) with a RedisWebhookDedupe (ioredis or node-redis) or a PostgresWebhookDedupe
 * (node-postgres) shared by every receiver. Config: env WORKER_CONFIG
 * (`ReceiverConfig`). It sends `ready` with its port, `succeeded` each time a handler finished, `holding` when the
 * handler of `hangOn` started (it then never finishes: the test kills the process there).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createClient } from 'redis';
import { PostgresWebhookDedupe } from '@postsched/sdk/postgres';
import { RedisWebhookDedupe } from '@postsched/sdk/redis';
import { createWebhookHandler, type WebhookDedupeStore, type WebhookHandlerOptions } from '@postsched/sdk/webhooks';

export interface ReceiverConfig {
  client: 'ioredis' | 'node-redis' | 'pg';
  /** The Redis or PostgreSQL server's URL. */
  url: string;
  /** The Redis key prefix, or the PostgreSQL table (made by the test). */
  prefix: string;
  secret: string;
  /** Events whose post id ends with this digit fail on their first run anywhere in the fleet (counted in the store's server). */
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

/** The store, a shared counter of each post's runs (the app's own work), and how to close the connection. */
async function connect(): Promise<{ dedupe: WebhookDedupeStore; runs: (id: string) => Promise<number>; close: () => void }> {
  const { prefix } = config;
  if (config.client === 'pg') {
    const pool = new pg.Pool({ connectionString: config.url });
    pool.on('error', () => {});
    const runs = async (id: string) =>
      Number((await pool.query(`INSERT INTO "${prefix}_runs" (id, n) VALUES ($1, 1) ON CONFLICT (id) DO UPDATE SET n = "${prefix}_runs".n + 1 RETURNING n`, [id])).rows[0].n);
    return { dedupe: new PostgresWebhookDedupe({ pool, table: prefix }), runs, close: () => void pool.end() };
  }
  if (config.client === 'ioredis') {
    const redis = new Redis(config.url);
    const runs = async (id: string) => Number(await redis.call('INCR', `${prefix}:test-runs:${id}`));
    return { dedupe: new RedisWebhookDedupe({ redis, prefix }), runs, close: () => redis.disconnect() };
  }
  const redis = createClient({ url: config.url });
  redis.on('error', () => {});
  await redis.connect();
  const runs = async (id: string) => Number(await redis.sendCommand(['INCR', `${prefix}:test-runs:${id}`]));
  return { dedupe: new RedisWebhookDedupe({ redis, prefix }), runs, close: () => void redis.destroy() };
}

const { dedupe, runs, close } = await connect();
const webhooks = createWebhookHandler({
  secret: config.secret,
  dedupe,
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
      const run = await runs(id);
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

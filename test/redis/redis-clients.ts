/**
 * The two Redis clients every store test runs against, each with its default reconnect behaviour, plus a
 * raw command function the tests use to look at (or tamper with) what the store wrote.
 */
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import type { RedisClientLike } from '@postsched/sdk/redis';

export interface TestClient {
  readonly client: RedisClientLike;
  raw(...args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

export interface ClientKind {
  readonly name: string;
  connect(url: string): Promise<TestClient>;
}

const ioredis: ClientKind = {
  name: 'ioredis',
  async connect(url) {
    const client = new Redis(url, { lazyConnect: true });
    client.on('error', () => {}); // reconnect noise once a test stops the server
    await client.connect();
    return {
      client,
      raw: (command, ...args) => client.call(command, ...args),
      close: async () => client.disconnect(),
    };
  },
};

const nodeRedis: ClientKind = {
  name: 'node-redis',
  async connect(url) {
    const client = createClient({ url });
    client.on('error', () => {}); // node-redis throws on an unhandled 'error' event
    await client.connect();
    return {
      client,
      raw: (...args) => client.sendCommand(args),
      close: async () => {
        if (client.isOpen) client.destroy();
      },
    };
  },
};

export const CLIENT_KINDS: readonly ClientKind[] = [ioredis, nodeRedis];

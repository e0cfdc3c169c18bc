/**
 * Starts a real Redis Cluster for one test file: three `redis-server --cluster-enabled yes` masters on free
 * loopback ports, the 16,384 slots split between them (CLUSTER ADDSLOTSRANGE), joined by CLUSTER MEET; no
 * replicas, no persistence. Stopped after.
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { type RedisServer, startRedisServer } from './redis-server.js';

export interface RedisClusterServer {
  /** The masters, as `{ host, port }` for `new Cluster(nodes)`. */
  readonly nodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

const RANGES = [
  [0, 5460],
  [5461, 10922],
  [10923, 16383],
] as const;

export async function startRedisCluster(): Promise<RedisClusterServer> {
  const configs = RANGES.map(() => join(tmpdir(), `postsched-cluster-${crypto.randomUUID()}.conf`));
  const servers: RedisServer[] = await Promise.all(
    configs.map((file) => startRedisServer(['--cluster-enabled', 'yes', '--cluster-config-file', file, '--cluster-node-timeout', '5000'])),
  );
  const clients = servers.map((server) => new Redis(server.url));
  try {
    await Promise.all(clients.map((client, i) => client.call('CLUSTER', 'ADDSLOTSRANGE', String(RANGES[i]![0]), String(RANGES[i]![1]))));
    for (const server of servers.slice(1)) await clients[0]!.call('CLUSTER', 'MEET', '127.0.0.1', String(server.port));
    for (let attempt = 0; ; attempt++) {
      const infos = await Promise.all(clients.map((client) => client.call('CLUSTER', 'INFO') as Promise<string>));
      if (infos.every((info) => info.includes('cluster_state:ok') && info.includes('cluster_known_nodes:3'))) break;
      if (attempt > 200) throw new Error(`the Redis Cluster did not form:\n${infos.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    for (const client of clients) client.disconnect();
  }
  return {
    nodes: servers.map((server) => ({ host: '127.0.0.1', port: server.port })),
    async stop() {
      await Promise.all(servers.map((server) => server.stop()));
      await Promise.all(configs.map((file) => rm(file, { force: true })));
    },
  };
}

/**
 * A real `redis-server` (or a 3-master Redis Cluster) for one test file, started by test/support/redis-process.ts
 * with the binary the test set-up provides (test/support/test-tools.ts): REDIS_SERVER_BIN, the PATH, or installed
 * from Debian's packages on a fresh machine.
 */
import { inject } from 'vitest';
import { type RedisCluster, type RedisServer, startRedisClusterProcess, startRedisProcess } from '../support/redis-process.js';

export type { RedisCluster, RedisServer };

/** `extraArgs`: more command-line options, e.g. `['--cluster-enabled', 'yes', …]`. */
export function startRedisServer(extraArgs: string[] = []): Promise<RedisServer> {
  return startRedisProcess(inject('redisServerBin'), extraArgs);
}

/** A Redis Cluster of `masters` nodes without replicas, `cluster_state:ok` on every node. */
export function startRedisCluster(masters = 3): Promise<RedisCluster> {
  return startRedisClusterProcess(inject('redisServerBin'), masters);
}

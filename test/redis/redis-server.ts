/**
 * Starts a real `redis-server` for one test file: a free loopback port, no persistence, stopped after.
 * The binary comes from the test set-up (test/support/test-tools.ts): REDIS_SERVER_BIN, the PATH, or installed
 * from Debian's packages on a fresh machine.
 */
import { inject } from 'vitest';
import { type RedisServer, startRedisProcess } from '../support/redis-process.js';

export type { RedisServer };

/** `extraArgs`: more command-line options, e.g. `['--cluster-enabled', 'yes', …]`. */
export function startRedisServer(extraArgs: string[] = []): Promise<RedisServer> {
  return startRedisProcess(inject('redisServerBin'), extraArgs);
}

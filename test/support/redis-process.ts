/**
 * Starts a real `redis-server` process: a free loopback port, no persistence, its own directory, stopped by
 * `stop()`. The fault tests also pause it (SIGSTOP), restart it (empty, or on a snapshot saved earlier with SAVE)
 * and join three of them into a Redis Cluster. No vitest in here, so the benchmarks start theirs the same way;
 * tests use test/redis/redis-server.ts, which passes the binary the test set-up provisioned.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. Safe to call twice. */
  stop(): Promise<void>;
  /** SIGSTOP: Redis stalls with its connections open, as on a long fork or a swapping host. */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
  /**
   * Stops the server and starts it again on the same port and directory: empty (no persistence), or holding the
   * snapshot a `SAVE` wrote earlier (what a restore from an older backup looks like), or what its append-only file
   * holds when started with `--appendonly yes`. `signal` SIGKILL: a crash (no shutdown save, no AOF flush).
   */
  restart(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

/** `binary`: the redis-server to run; `extraArgs`: more command-line options, e.g. `['--cluster-enabled', 'yes', …]`. */
export async function startRedisProcess(binary: string, extraArgs: string[] = []): Promise<RedisServer> {
  let lastError: unknown;
  // A free port can be taken between the probe and redis-server's bind: try a few.
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await startOn(binary, await freePort(), extraArgs);
    } catch (error) {
      lastError = error;
      if (error instanceof Error && error.message.includes('not found')) throw error;
    }
  }
  throw lastError;
}

async function startOn(binary: string, port: number, extraArgs: string[]): Promise<RedisServer> {
  // Its own directory: no dump.rdb of another run is ever loaded, and a test's SAVE lands here only.
  const dir = mkdtempSync(join(tmpdir(), 'postsched-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs];
  let child = await spawnReady(binary, args).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async restart(signal) {
      await stop(child, signal);
      child = await spawnReady(binary, args);
    },
  };
}

function spawnReady(binary: string, args: string[]): Promise<ChildProcess> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve(child);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new Error(`${binary} not found: install it (apt-get install redis-server) or set REDIS_SERVER_BIN`)
          : error,
      ),
    );
    child.once('exit', (code) => reject(new Error(`redis-server exited with code ${code} before it was ready:\n${output}`)));
  });
}

function stop(child: ChildProcess, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGCONT'); // a paused server would never act on SIGTERM
    child.kill(signal);
  });
}

export interface RedisCluster {
  /** The masters, as ioredis `Cluster` and node-redis `createCluster` take them. */
  readonly nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/**
 * A Redis Cluster of `masters` nodes and no replicas: each a `redis-server --cluster-enabled yes` on a free port (and
 * a free cluster-bus port), its share of the 16,384 slots given with CLUSTER ADDSLOTSRANGE, joined with CLUSTER MEET.
 * Resolves once every node says `cluster_state:ok`.
 */
export async function startRedisClusterProcess(binary: string, masters = 3): Promise<RedisCluster> {
  const servers: RedisServer[] = [];
  const busPorts: number[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      busPorts.push(await freePort());
      servers.push(await startRedisProcess(binary, ['--cluster-enabled', 'yes', '--cluster-port', String(busPorts[i]), '--cluster-node-timeout', '2000']));
    }
    const clients = servers.map((s) => new Redis(s.url));
    try {
      const per = Math.ceil(16_384 / masters);
      await Promise.all(clients.map((c, i) => c.call('CLUSTER', 'ADDSLOTSRANGE', String(i * per), String(Math.min(16_383, (i + 1) * per - 1)))));
      for (const [i, s] of servers.entries()) if (i > 0) await clients[0]!.call('CLUSTER', 'MEET', '127.0.0.1', String(s.port), String(busPorts[i]));
      for (let attempt = 0; ; attempt++) {
        const states = await Promise.all(clients.map((c) => c.call('CLUSTER', 'INFO') as Promise<string>));
        const known = await Promise.all(clients.map((c) => c.call('CLUSTER', 'NODES') as Promise<string>));
        if (states.every((s) => s.includes('cluster_state:ok')) && known.every((n) => n.trim().split('\n').length === masters)) break;
        if (attempt > 300) throw new Error(`the Redis Cluster did not form:\n${states.join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      for (const c of clients) c.disconnect();
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    throw error;
  }
  return {
    nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })),
    stop: async () => void (await Promise.all(servers.map((s) => s.stop()))),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

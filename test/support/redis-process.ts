/**
 * Starts a real `redis-server` process: a free loopback port, no persistence, stopped by `stop()`. No vitest in
 * here, so the benchmarks start theirs the same way (bench/measures/webhooks.ts); tests use
 * test/redis/redis-server.ts, which passes the binary the test set-up provisioned.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. Safe to call twice. */
  stop(): Promise<void>;
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

function startOn(binary: string, port: number, extraArgs: string[]): Promise<RedisServer> {
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir(), ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve({ port, url: `redis://127.0.0.1:${port}`, stop: () => stop(child) });
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

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
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

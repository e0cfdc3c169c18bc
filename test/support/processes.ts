/**
 * Child processes for tests that run what a user runs: the `postsched` CLI (from source, through tsx, as the
 * built bin would run it) and the examples (`npx tsx examples/<file>`), each in its own Node process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = fileURLToPath(new URL('../../src/cli/index.ts', import.meta.url));

/** A running process whose output is collected, and awaited line by line. */
export interface Running {
  readonly child: ChildProcess;
  /** stdout and stderr so far, interleaved as they arrived. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in the output (waiting for it); rejects if the process exits first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** Resolves with the exit code (the signal's name if it was killed). */
  readonly exited: Promise<number | string>;
  /** Sends `signal` (SIGINT: Ctrl-C) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Starts `node [--import tsx] script args…` with `env` added to this process's environment. */
export function start(script: string, args: string[], env: Record<string, string | undefined> = {}, input?: 'pipe', cwd = ROOT): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: [input ?? 'ignore', 'pipe', 'pipe'],
  });
  let all = '';
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    all += chunk.toString();
    out += chunk.toString();
    wake();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    all += chunk.toString();
    err += chunk.toString();
    wake();
  });
  const exited = new Promise<number | string>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      resolve(code ?? signal ?? -1);
      wake();
    });
  });
  const running: Running = {
    child,
    output: () => all,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(all);
          if (match !== null) {
            waiters.delete(check);
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiters.delete(check);
            reject(new Error(`the process exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}:\n${all}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    async stop(signal = 'SIGINT') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  return running;
}

/** `postsched args…` from source. */
export function startCli(args: string[], env: Record<string, string | undefined> = {}): Running {
  return start(CLI, args, env);
}

/** Runs `postsched args…` to its end. */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}) {
  const running = startCli(args, env);
  const code = await running.exited;
  return { code, stdout: running.stdout(), stderr: running.stderr(), output: running.output() };
}

/** A `postsched mock` on a free port, and the settings it printed as `export NAME=value` lines. */
export async function startMock(args: string[] = []): Promise<{ mock: Running; env: Record<string, string> }> {
  const mock = startCli(['mock', '--port', '0', ...args]);
  await mock.waitFor(/Ctrl-C stops it\./);
  const env: Record<string, string> = {};
  for (const [, name, value] of mock.stdout().matchAll(/^export (\w+)=(\S+)$/gm)) env[name as string] = value as string;
  return { mock, env };
}

/** Stops what is still running (for afterEach/afterAll: safe when the set-up failed half way). */
export async function stopAll(...running: (Running | undefined)[]): Promise<void> {
  await Promise.all(running.map((r) => r?.stop('SIGKILL')));
}

/** A port of 127.0.0.1 that was free a moment ago (for a redirect URI that must be known before its server starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Forks worker processes (through tsx: token-worker.ts, or another worker file) and talks to them over IPC. */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerConfig, WorkerMessage } from './token-worker.js';

const WORKER = fileURLToPath(new URL('./token-worker.ts', import.meta.url));

export interface Worker<M extends { type: string } = WorkerMessage, C extends { type: string } = { type: 'go' | 'exit' }> {
  readonly child: ChildProcess;
  /** Resolves with the next message of this type (or with one already received and not yet taken). */
  next<T extends M['type']>(type: T): Promise<Extract<M, { type: T }>>;
  send(message: C): void;
  /** SIGKILL: no `finally`, no lock release, nothing stored. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** Asks the worker to close its Redis client and exit; kills it if it is not gone after `exit`. */
  stop(): Promise<void>;
}

export function startWorker(config: WorkerConfig): Worker {
  return startWorkerFile(WORKER, config);
}

/** A worker of `file` (run through tsx) given `config` as JSON in WORKER_CONFIG; it must handle `{ type: 'exit' }`. */
export function startWorkerFile<M extends { type: string }, C extends { type: string }>(file: string, config: unknown): Worker<M, C> {
  type WorkerMessage = M;
  const child = fork(file, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, WORKER_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const received: WorkerMessage[] = [];
  const waiting: Array<{ type: string; resolve: (m: WorkerMessage) => void; reject: (e: Error) => void }> = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (message: WorkerMessage) => {
    const at = waiting.findIndex((w) => w.type === message.type);
    if (at === -1) received.push(message);
    else waiting.splice(at, 1)[0]?.resolve(message);
  });
  child.once('exit', (code, signal) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`worker exited (${code ?? signal}) before sending ${w.type}`));
  });
  return {
    child,
    next(type) {
      const at = received.findIndex((m) => m.type === type);
      if (at !== -1) return Promise.resolve(received.splice(at, 1)[0] as never);
      if (child.exitCode !== null || child.signalCode !== null) return Promise.reject(new Error(`worker exited before sending ${type}`));
      return new Promise((resolve, reject) => waiting.push({ type, resolve: resolve as (m: WorkerMessage) => void, reject }));
    },
    send(message) {
      // A worker killed meanwhile (the chaos tests SIGKILL them): the send fails with EPIPE; handed to the callback,
      // not thrown as an uncaught error. Its exit is what the caller awaits.
      if (child.connected) child.send(message, ignoreLostWorker);
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ type: 'exit' }, ignoreLostWorker);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A message to a worker that has just died is lost on purpose: its exit settles what waits for it. */
function ignoreLostWorker(): void {}

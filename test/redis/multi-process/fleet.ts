/** Forks token-worker.ts processes, or another worker script (through tsx), and talks to them over IPC. */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerConfig, WorkerMessage } from './token-worker.js';

const WORKER = fileURLToPath(new URL('./token-worker.ts', import.meta.url));

export interface Worker<Message extends { type: string } = WorkerMessage> {
  readonly child: ChildProcess;
  /** Resolves with the next message of this type (or with one already received and not yet taken). */
  next<T extends Message['type']>(type: T): Promise<Extract<Message, { type: T }>>;
  send(message: { type: 'go' | 'exit' }): void;
  /** SIGKILL: no `finally`, no lock release, nothing stored. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** Asks the worker to close its Redis client and exit; kills it if it is not gone after `exit`. */
  stop(): Promise<void>;
}

/** `script`: another worker (it reads its config from WORKER_CONFIG and exits on `{ type: 'exit' }`). */
export function startWorker<Message extends { type: string } = WorkerMessage>(
  config: WorkerConfig | object,
  script = WORKER,
): Worker<Message> {
  const child = fork(script, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, WORKER_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const received: Message[] = [];
  const waiting: Array<{ type: string; resolve: (m: Message) => void; reject: (e: Error) => void }> = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (message: Message) => {
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
      return new Promise((resolve, reject) => waiting.push({ type, resolve: resolve as (m: Message) => void, reject }));
    },
    send(message) {
      if (child.connected) child.send(message);
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      this.send({ type: 'exit' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

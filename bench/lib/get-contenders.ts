/**
 * The one-GET contenders of the latency and throughput measures, all against the same loopback server
 * (bench/servers/fixed-json.mjs, its own process): the floor (bare fetch + JSON.parse), ky alone (what of our
 * cost is ky's: with its default options, and with the options the SDK gives it), ours (`posts.get`),
 * openai-node (`client.get`) and stripe-node (`customers.retrieve`, a typed GET of one object by id: the same
 * work as `posts.get`). Each resolves to the parsed object.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import ky from 'ky';
import OpenAI from 'openai';
import Stripe from 'stripe';
import type { PostSched as PostSchedClass } from '@postsched/sdk';
import { BENCH_HEADERS, BENCH_TOKEN, kyAlone } from './ky-alone.js';

export type GetContender = 'floor' | 'kyPlain' | 'kySdkOptions' | 'ours' | 'openai' | 'stripe';

export const CONTENDER_NAMES: Record<GetContender, string> = {
  floor: 'floor: fetch + JSON.parse',
  kyPlain: 'ky alone: ky.get(url).json(), default options',
  kySdkOptions: 'ky with the SDK’s options (timeout, retry, redirect)',
  ours: '@postsched/sdk posts.get',
  openai: 'openai-node client.get',
  stripe: 'stripe-node customers.retrieve',
};

export interface LoopbackJsonServer {
  origin: string;
  /** The server's process id, for its CPU time (bench/lib/cpu.ts). */
  pid: number;
  close(): Promise<void>;
}

/** Starts the server in its own process; with `cpus` (a taskset list), pinned to those cores. */
export async function startJsonServer(cpus?: string): Promise<LoopbackJsonServer> {
  const server = [process.execPath, new URL('../servers/fixed-json.mjs', import.meta.url).pathname];
  // taskset execs node in its own place, so the child's pid is the server's.
  const [command, ...args] = cpus === undefined ? server : ['taskset', '-c', cpus, ...server];
  const child: ChildProcess = spawn(command!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  const port = Number(chunk.toString().trim());
  if (!Number.isInteger(port)) throw new Error(`the JSON server did not print its port: ${chunk.toString()}`);
  return {
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async close() {
      child.stdin!.end();
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

/**
 * The SDK as users get it: the built package (dist/), like ky, openai and stripe from their builds. The sources
 * through tsx would carry its keepNames transform, a `__name()` call (an Object.defineProperty) on every closure
 * the SDK creates per call, which no user's bundle has.
 */
async function builtSdk(): Promise<{ PostSched: typeof PostSchedClass }> {
  return (await import(new URL('../../dist/index.node.js', import.meta.url).href)) as { PostSched: typeof PostSchedClass };
}

function getContenders(origin: string, PostSched: typeof PostSchedClass): Record<GetContender, () => Promise<{ id: string }>> {
  const token = BENCH_TOKEN;
  const ours = new PostSched({ baseUrl: origin, auth: token });
  const openai = new OpenAI({ apiKey: token, baseURL: origin });
  const { port } = new URL(origin);
  const stripe = new Stripe('sk_test_bench', { host: '127.0.0.1', port, protocol: 'http' });
  const url = `${origin}/posts/p_1`;
  const headers = BENCH_HEADERS;
  // What src/http/request.ts gives ky on every call, less its own hooks (the fetch wrapper, the retry rules).
  const sdkOptions = { prefixUrl: origin, headers, timeout: 30_000, retry: { limit: 2 }, redirect: 'manual' } as const;
  return {
    floor: async () => JSON.parse(await (await fetch(url, { headers })).text()) as { id: string },
    kyPlain: kyAlone(origin),
    kySdkOptions: () => ky.get('posts/p_1', sdkOptions).json<{ id: string }>(),
    ours: () => ours.posts.get('p_1'),
    openai: () => openai.get<{ id: string }>('/posts/p_1'),
    stripe: () => stripe.customers.retrieve('p_1') as Promise<{ id: string }>,
  };
}

/** Each contender answers once with the post before anything is timed (and connections are open). */
async function checkContenders(contenders: Record<GetContender, () => Promise<{ id: string }>>): Promise<void> {
  for (const [name, fn] of Object.entries(contenders)) {
    const result = await fn();
    if (result?.id !== 'post_1') throw new Error(`${name} did not return the post`);
  }
}

/** What a GET measure works with: the checked contenders, their names, and an empty sample list per contender. */
export interface GetBench {
  contenders: Record<GetContender, () => Promise<{ id: string }>>;
  names: GetContender[];
  samples: Record<GetContender, number[]>;
  /** The loopback server's process id, for its CPU time. */
  serverPid: number;
}

/**
 * Starts the loopback server, builds the contenders against it and checks each once, runs `measure`, and
 * always stops the server: the set-up every GET measure (latency, throughput) shares. `serverCpus` pins the
 * server to those cores (a taskset list).
 */
export async function withGetContenders<T>(measure: (bench: GetBench) => Promise<T>, { serverCpus }: { serverCpus?: string } = {}): Promise<T> {
  const server = await startJsonServer(serverCpus);
  try {
    const contenders = getContenders(server.origin, (await builtSdk()).PostSched);
    await checkContenders(contenders);
    const names = Object.keys(contenders) as GetContender[];
    const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<GetContender, number[]>;
    return await measure({ contenders, names, samples, serverPid: server.pid });
  } finally {
    await server.close();
  }
}

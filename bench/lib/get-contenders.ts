/**
 * The one-GET contenders of the latency and throughput measures, all against the same loopback server
 * (bench/servers/fixed-json.mjs, its own process): the floor (bare fetch + JSON.parse), ours
 * (`posts.get`), openai-node (`client.get`) and stripe-node (`customers.retrieve`, a typed GET of one
 * object by id: the same work as `posts.get`). Each resolves to the parsed object.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import OpenAI from 'openai';
import Stripe from 'stripe';
import { PostSched } from '@postsched/sdk';

export type GetContender = 'floor' | 'ours' | 'openai' | 'stripe';

export const CONTENDER_NAMES: Record<GetContender, string> = {
  floor: 'floor: fetch + JSON.parse',
  ours: '@postsched/sdk posts.get',
  openai: 'openai-node client.get',
  stripe: 'stripe-node customers.retrieve',
};

export interface LoopbackJsonServer {
  origin: string;
  close(): Promise<void>;
}

async function startJsonServer(): Promise<LoopbackJsonServer> {
  const child: ChildProcess = spawn(process.execPath, [new URL('../servers/fixed-json.mjs', import.meta.url).pathname], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  const port = Number(chunk.toString().trim());
  if (!Number.isInteger(port)) throw new Error(`the JSON server did not print its port: ${chunk.toString()}`);
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      child.stdin!.end();
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

function getContenders(origin: string): Record<GetContender, () => Promise<{ id: string }>> {
  const token = 'tok_bench_0123456789';
  const ours = new PostSched({ baseUrl: origin, auth: token });
  const openai = new OpenAI({ apiKey: token, baseURL: origin });
  const { port } = new URL(origin);
  const stripe = new Stripe('sk_test_bench', { host: '127.0.0.1', port, protocol: 'http' });
  const url = `${origin}/posts/p_1`;
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
  return {
    floor: async () => JSON.parse(await (await fetch(url, { headers })).text()) as { id: string },
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
}

/**
 * Starts the loopback server, builds the contenders against it and checks each once, runs `measure`, and
 * always stops the server: the set-up every GET measure (latency, throughput) shares.
 */
export async function withGetContenders<T>(measure: (bench: GetBench) => Promise<T>): Promise<T> {
  const server = await startJsonServer();
  try {
    const contenders = getContenders(server.origin);
    await checkContenders(contenders);
    const names = Object.keys(contenders) as GetContender[];
    const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<GetContender, number[]>;
    return await measure({ contenders, names, samples });
  } finally {
    await server.close();
  }
}

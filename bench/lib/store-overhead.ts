/**
 * What token stores cost every other call of the process (issue 20): CPU per `posts.get` with a cached token in a
 * process that never made a `RedisTokenStore`, against one that created and locked `stores` of them (100,000 by
 * default) and dropped them before measuring. Target: ratio ≤ 1.10. Each side runs in its own child process (a
 * store that has once locked cannot be undone in a process), alternated over several rounds; medians are returned.
 * The stores talk to a stub Redis client that answers at once (what is measured is the store's own cost, not
 * Redis); the calls go to the loopback JSON server of the request measures.
 *
 * `npx tsx bench/lib/store-overhead.ts [--stores=100000] [--calls=5000] [--rounds=7]` prints the result as JSON.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TEST_KEY } from '../../test/support/token-key.js';

export interface StoreOverhead {
  /** CPU (user + system) per call, in ms, in a process that never made a store. */
  cpuPerCallNoStores: number;
  /** CPU per call, in ms, after `stores` RedisTokenStores were created, locked once each, and dropped. */
  cpuPerCallWithStores: number;
  /** `cpuPerCallWithStores / cpuPerCallNoStores`; the target is ≤ 1.10. */
  ratio: number;
  /** How many stores the second side created and locked. */
  stores: number;
}

export interface StoreOverheadOptions {
  /** Stores created and locked by the "with" side. Default 100,000. */
  stores?: number;
  /** Measured calls per child (after a warm-up of half as many). Default 5,000. */
  calls?: number;
  /** Children per side, alternated. Default 7: one child's CPU per call moves by ±15% between children. */
  rounds?: number;
}

const SELF = fileURLToPath(import.meta.url);
const SERVER = fileURLToPath(new URL('../servers/fixed-json.mjs', import.meta.url));

export async function measureStoreOverhead(options: StoreOverheadOptions = {}): Promise<StoreOverhead> {
  const stores = options.stores ?? 100_000;
  const calls = options.calls ?? 5_000;
  const rounds = options.rounds ?? 7;
  const server = spawn(process.execPath, [SERVER], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const port = await firstLine(server);
    const origin = `http://127.0.0.1:${port}`;
    const none: number[] = [];
    const some: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternate which side goes first, so a drift of the machine's load weighs on both.
      const order = round % 2 === 0 ? [0, stores] : [stores, 0];
      for (const count of order) (count === 0 ? none : some).push(await child(origin, count, calls));
    }
    const cpuPerCallNoStores = median(none);
    const cpuPerCallWithStores = median(some);
    return { cpuPerCallNoStores, cpuPerCallWithStores, ratio: cpuPerCallWithStores / cpuPerCallNoStores, stores };
  } finally {
    server.kill();
  }
}

function child(origin: string, stores: number, calls: number): Promise<number> {
  const proc = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', SELF, '--child', origin, String(stores), String(calls)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return firstLine(proc).then((line) => (JSON.parse(line) as { cpuPerCallMs: number }).cpuPerCallMs);
}

/** The child's side: make and lock the stores, drop them, then time the calls. */
async function runChild(origin: string, stores: number, calls: number): Promise<void> {
  const { PostSched, TokenManager } = await import('@postsched/sdk');
  const { RedisTokenStore } = await import('@postsched/sdk/redis');
  // A Redis that grants every lock and answers every script at once: only the store's own work is left.
  const redis = { call: async (command: string) => (command === 'SET' ? 'OK' : command === 'GET' ? null : 1) };
  for (let made = 0; made < stores; made += 1_000) {
    const batch = Array.from({ length: Math.min(1_000, stores - made) }, (_, i) => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: `bench:{u${made + i}}` }));
    await Promise.all(batch.map((store) => store.lock(async () => store.get())));
  }
  (globalThis as { gc?: () => void }).gc?.();

  const manager = new TokenManager({ oauth: { refresh: () => Promise.reject(new Error('no refresh expected')) } });
  await manager.setTokens({ accessToken: 'tok_bench_0123456789', refreshToken: 'rt_bench', expiresAt: Date.now() + 86_400_000, scopes: [], tokenType: 'bearer' });
  const client = new PostSched({ baseUrl: origin, auth: manager });
  for (let i = 0; i < calls / 2; i++) await client.posts.get('p_1');
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) await client.posts.get('p_1');
  const used = process.cpuUsage(before);
  process.stdout.write(`${JSON.stringify({ cpuPerCallMs: (used.user + used.system) / 1000 / calls })}\n`);
}

function firstLine(proc: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const end = out.indexOf('\n');
      if (end !== -1) resolve(out.slice(0, end));
    });
    proc.once('exit', (code) => reject(new Error(`child exited (${code}) before answering`)));
    proc.once('error', reject);
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function flag(name: string, fallback: number): number {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found === undefined ? fallback : Number(found.slice(name.length + 3));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf('--child');
  if (at !== -1) {
    const [origin, stores, calls] = process.argv.slice(at + 1) as [string, string, string];
    await runChild(origin, Number(stores), Number(calls));
    process.exit(0);
  }
  const result = await measureStoreOverhead({ stores: flag('stores', 100_000), calls: flag('calls', 5_000), rounds: flag('rounds', 7) });
  console.log(JSON.stringify(result, null, 2));
}

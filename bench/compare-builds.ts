/**
 * A/B of two builds of the SDK on the request path: is a change to src/http measurably cheaper? Copy dist/ of each
 * build aside (`npm run build && cp -r dist /tmp/before`, change, build, `cp -r dist /tmp/after`), then
 * `npx tsx bench/compare-builds.ts /tmp/before /tmp/after`. In one process, against the latency measure's loopback
 * server: sequential `posts.get` of each build and a plain ky GET of the same URL, in rounds whose order is shuffled,
 * CPU time per call of each round ÷ ky alone's in that round; prints the median ratio per build. Run it a few times:
 * on a shared machine the ratio moves by a few hundredths between runs, so a smaller difference is not a result.
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { PostSched as PostSchedClass } from '@postsched/sdk';
import { startJsonServer } from './lib/get-contenders.js';
import { BENCH_TOKEN, kyAlone } from './lib/ky-alone.js';
import { median } from './lib/stats.js';

const builds = process.argv.slice(2);
if (builds.length === 0) {
  console.error('usage: npx tsx bench/compare-builds.ts <dist dir> [<dist dir> …]');
  process.exit(1);
}
const rounds = 30;
const perRound = 600;
const token = BENCH_TOKEN;

const server = await startJsonServer();
try {
  const contenders = new Map<string, () => Promise<unknown>>();
  for (const dir of builds) {
    const { PostSched } = (await import(pathToFileURL(resolve(dir, 'index.node.js')).href)) as { PostSched: typeof PostSchedClass };
    const client = new PostSched({ baseUrl: server.origin, auth: token });
    contenders.set(dir, () => client.posts.get('p_1'));
  }
  contenders.set('ky alone', kyAlone(server.origin));

  for (const get of contenders.values()) for (let i = 0; i < 2000; i++) await get();
  const ratios = new Map([...contenders.keys()].map((name) => [name, [] as number[]]));
  for (let round = 0; round < rounds; round++) {
    const order = [...contenders.keys()].sort(() => Math.random() - 0.5);
    const cpuUs = new Map<string, number>();
    for (const name of order) {
      const get = contenders.get(name)!;
      const before = process.cpuUsage();
      for (let i = 0; i < perRound; i++) await get();
      const { user, system } = process.cpuUsage(before);
      cpuUs.set(name, user + system);
    }
    for (const name of contenders.keys()) ratios.get(name)!.push(cpuUs.get(name)! / cpuUs.get('ky alone')!);
  }
  for (const [name, list] of ratios) console.log(`${name.padEnd(40)} ${median(list).toFixed(3)}x ky alone (CPU per call, median of ${rounds} rounds)`);
} finally {
  await server.close();
}

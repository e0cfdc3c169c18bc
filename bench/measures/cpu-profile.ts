/**
 * Where the CPU of one `posts.get` goes, beside a plain ky GET of the same URL: V8's sampling profiler in a child
 * process per contender (bench/children/profile-get.ts), self time summed per owner of the code (the SDK, ky,
 * Node's fetch, the rest of Node, natives, GC). It says what the latency and throughput verdicts cannot: which part
 * of the gap to plain ky is the SDK's own code. Also measured: posts.get over a prototype node:http fetch (the
 * stretch of issue 16, not shipped).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startJsonServer } from '../lib/get-contenders.js';
import { OWNER_NAMES, type Owner } from '../lib/owners.js';
import { fmt, type Section } from '../lib/report.js';

type Contender = 'ours' | 'kyPlain' | 'oursNodeHttp';
type ChildResult = { calls: number; cpuUs: number; selfUs: Partial<Record<Owner, number>>; ownFunctions: Record<string, number> };

/** The owners shown, in this order (idle time is not CPU; the benchmark loop is the same in every child). */
const SHOWN: Owner[] = ['sdk', 'ky', 'undici', 'node', 'native', 'gc', 'bench'];

export async function measureCpuProfile({ quick }: { quick: boolean }): Promise<Section> {
  const calls = quick ? 3000 : 10_000;
  const rounds = quick ? 1 : 3;
  const server = await startJsonServer();
  const script = new URL('../children/profile-get.ts', import.meta.url).pathname;
  const totals: Record<Contender, ChildResult[]> = { ours: [], kyPlain: [], oursNodeHttp: [] };
  try {
    // Interleaved rounds, one fresh process per contender each, so drift on the shared machine hits all alike.
    for (let round = 0; round < rounds; round++) {
      for (const contender of Object.keys(totals) as Contender[]) {
        const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, contender, server.origin, String(calls)], {
          maxBuffer: 1024 * 1024,
        });
        totals[contender].push(JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildResult);
      }
    }
  } finally {
    await server.close();
  }
  const perCall = (contender: Contender, pick: (r: ChildResult) => number) => {
    const results = totals[contender];
    return results.reduce((sum, r) => sum + pick(r), 0) / results.reduce((sum, r) => sum + r.calls, 0);
  };
  const owner = (contender: Contender, o: Owner) => perCall(contender, (r) => r.selfUs[o] ?? 0);
  const sampled = (contender: Contender) => SHOWN.reduce((sum, o) => sum + owner(contender, o), 0);
  const cpu = (contender: Contender) => perCall(contender, (r) => r.cpuUs);
  if (owner('ours', 'ky') === 0) throw new Error('no ky code found in the profile of posts.get: has tsup renamed ky’s chunk (bench/lib/owners.ts)?');

  const us = (n: number) => `${n.toFixed(1)} µs`;
  const signed = (n: number) => `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(1)} µs`;
  const gap = sampled('ours') - sampled('kyPlain');
  const ownFunctions = new Map<string, number>();
  for (const r of totals.ours) for (const [name, self] of Object.entries(r.ownFunctions)) ownFunctions.set(name, (ownFunctions.get(name) ?? 0) + self);
  const ourCalls = totals.ours.reduce((sum, r) => sum + r.calls, 0);
  const topOwn = [...ownFunctions]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([name, self]) => `${name} ${(self / ourCalls).toFixed(2)}`)
    .join(', ');
  return {
    title: 'Where the CPU of posts.get goes',
    method:
      `V8's sampling profiler (100 µs interval, node:inspector) over ${calls.toLocaleString('en-US')} sequential GETs of one post ` +
      `from the loopback JSON server of the latency measure, one child process per contender after a warm-up, ${rounds} ` +
      'interleaved round(s). Value: self time per call of the code each owner wrote, for posts.get (the built package); ' +
      'ratio: ÷ the same owner in a plain ky GET of the same URL; note: ky alone and the difference. The profiler ' +
      'slows every contender alike; only the main thread is sampled.',
    unit: 'posts.get',
    rows: [
      ...SHOWN.map((o) => ({
        name: OWNER_NAMES[o],
        value: us(owner('ours', o)),
        ...(owner('kyPlain', o) > 0 ? { ratio: fmt.x(owner('ours', o) / owner('kyPlain', o)) } : {}),
        note: `ky alone ${us(owner('kyPlain', o))}; ${signed(owner('ours', o) - owner('kyPlain', o))}`,
      })),
      {
        name: 'all of the above (sampled CPU per call)',
        value: us(sampled('ours')),
        ratio: fmt.x(sampled('ours') / sampled('kyPlain')),
        note: `ky alone ${us(sampled('kyPlain'))}; ${signed(gap)}`,
      },
    ],
    target: 'no target of its own: it explains the CPU verdicts of the latency and throughput measures',
    met: undefined,
    verdicts: [],
    notes: [
      `Of the ${signed(gap)} per call between posts.get and a plain ky GET, the SDK's own code is ` +
        `${us(owner('ours', 'sdk'))}; its functions (µs/call): ${topOwn}. parseBody's time is JSON.parse, which ky alone ` +
        "runs inside its own `.json()` (in ky's row); readCapped is the body limit (`maxResponseBytes`).",
      `Process CPU per call (every thread, profiler on): posts.get ${us(cpu('ours'))}, ky alone ${us(cpu('kyPlain'))} ` +
        `(${fmt.x(cpu('ours') / cpu('kyPlain'))}), posts.get over a prototype node:http fetch ${us(cpu('oursNodeHttp'))} ` +
        `(${fmt.x(cpu('oursNodeHttp') / cpu('kyPlain'))} ky alone; Node's fetch in it ${us(owner('oursNodeHttp', 'undici'))} ` +
        `instead of ${us(owner('ours', 'undici'))}). The prototype is not shipped: see the README's Benchmarks section.`,
    ],
  };
}

/**
 * Latency of one `posts.get(id)` against a loopback server answering fixed JSON, sequential requests,
 * median and p99, and the client's CPU time per call, against the floor (bare fetch + JSON.parse), ky alone
 * and the peers making the equivalent GET.
 * Targets (issue 16): posts.get ≤ 1.05x a plain ky GET of the same URL (latency and CPU per call), and
 * below openai-node on the ratios to the fetch floor.
 */
import { ownCpuMs, processCpuMs } from '../lib/cpu.js';
import { fmt, ratioVerdict, type Section } from '../lib/report.js';
import { percentile } from '../lib/stats.js';
import { CONTENDER_NAMES, withGetContenders, type GetContender } from '../lib/get-contenders.js';

export async function measureLatency({ quick }: { quick: boolean }): Promise<Section> {
  const rounds = quick ? 4 : 12;
  const perRound = quick ? 150 : 500;
  return withGetContenders(async ({ contenders, names, samples, serverPid }) => {
    const cpuMs = Object.fromEntries(names.map((n) => [n, 0])) as Record<GetContender, number>;
    const serverCpuMs = Object.fromEntries(names.map((n) => [n, 0])) as Record<GetContender, number>;
    // Warm-up (JIT, connection pools), then interleaved rounds so that drift hits every contender alike.
    for (const name of names) for (let i = 0; i < perRound; i++) await contenders[name]();
    for (let round = 0; round < rounds; round++) {
      for (const name of names) {
        const fn = contenders[name];
        const out = samples[name];
        const cpuBefore = ownCpuMs();
        const serverBefore = processCpuMs(serverPid);
        for (let i = 0; i < perRound; i++) {
          const start = performance.now();
          await fn();
          out.push(performance.now() - start);
        }
        cpuMs[name] += ownCpuMs() - cpuBefore;
        serverCpuMs[name] += (processCpuMs(serverPid) ?? Number.NaN) - (serverBefore ?? Number.NaN);
      }
    }
    const calls = rounds * perRound;
    const p50 = (n: GetContender) => percentile(samples[n], 50);
    const p99 = (n: GetContender) => percentile(samples[n], 99);
    const ratio = (n: GetContender) => p50(n) / p50('floor');
    const cpuUs = (n: GetContender) => (1000 * cpuMs[n]) / calls;
    const cpuRatio = (n: GetContender) => cpuUs(n) / cpuUs('floor');
    const serverUs = (n: GetContender) => (1000 * serverCpuMs[n]) / calls;
    const verdicts = [
      ratioVerdict('posts.get ≤ 1.05x a plain ky GET of the same URL (median latency)', p50('ours') / p50('kyPlain'), 1.05, '≤'),
      ratioVerdict('posts.get ≤ 1.05x a plain ky GET of the same URL (client CPU per call)', cpuUs('ours') / cpuUs('kyPlain'), 1.05, '≤'),
      {
        target: 'posts.get below openai-node on the ratio to the fetch floor (median latency)',
        measured: `${fmt.x(ratio('ours'))}, openai-node ${fmt.x(ratio('openai'))}`,
        met: ratio('ours') < ratio('openai'),
      },
      {
        target: 'posts.get below openai-node on the ratio to the fetch floor (client CPU per call)',
        measured: `${fmt.x(cpuRatio('ours'))}, openai-node ${fmt.x(cpuRatio('openai'))}`,
        met: cpuRatio('ours') < cpuRatio('openai'),
      },
    ];
    return {
      title: 'Latency of one GET (posts.get)',
      method:
        `Sequential GETs of one post from a loopback node:http server (own process) answering fixed JSON: ` +
        `${rounds} interleaved rounds of ${perRound} per contender after a warm-up. Value: median; ratio: median ÷ ` +
        'floor median (lower is better). Note: p99, then CPU time per call of the client (this process, every ' +
        'thread) with its ratio to the floor, then of the server.',
      unit: 'median',
      rows: names.map((n) => ({
        name: CONTENDER_NAMES[n],
        value: fmt.ms(p50(n)),
        ...(n === 'floor' ? {} : { ratio: fmt.x(ratio(n)) }),
        note:
          `p99 ${fmt.ms(p99(n))}; client CPU ${cpuUs(n).toFixed(0)} µs/call` +
          `${n === 'floor' ? '' : ` (${fmt.x(cpuRatio(n))})`}; server ${Number.isNaN(serverUs(n)) ? 'n/a' : `${serverUs(n).toFixed(0)} µs`}`,
      })),
      target: verdicts.map((v) => v.target).join('; '),
      met: verdicts.every((v) => v.met),
      verdicts,
      notes: [
        `What is ky's: a plain ky GET costs ${fmt.x(ratio('kyPlain'))} the floor's median latency ` +
          `(${fmt.x(cpuRatio('kyPlain'))} its CPU), ky with the SDK's options ${fmt.x(ratio('kySdkOptions'))} ` +
          `(${fmt.x(cpuRatio('kySdkOptions'))}); posts.get ${fmt.x(ratio('ours'))} (${fmt.x(cpuRatio('ours'))}).`,
      ],
    };
  });
}

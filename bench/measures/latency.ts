/**
 * Latency of one `posts.get(id)` against a loopback server answering fixed JSON, sequential requests,
 * median and p99, against the floor (bare fetch + JSON.parse) and the peers making the equivalent GET.
 */
import { fmt, type Section } from '../lib/report.js';
import { percentile } from '../lib/stats.js';
import { CONTENDER_NAMES, withGetContenders, type GetContender } from '../lib/get-contenders.js';

export async function measureLatency({ quick }: { quick: boolean }): Promise<Section> {
  const rounds = quick ? 4 : 12;
  const perRound = quick ? 150 : 500;
  return withGetContenders(async ({ contenders, names, samples }) => {
    // Warm-up (JIT, connection pools), then interleaved rounds so that drift hits every contender alike.
    for (const name of names) for (let i = 0; i < perRound; i++) await contenders[name]();
    for (let round = 0; round < rounds; round++) {
      for (const name of names) {
        const fn = contenders[name];
        const out = samples[name];
        for (let i = 0; i < perRound; i++) {
          const start = performance.now();
          await fn();
          out.push(performance.now() - start);
        }
      }
    }
    const p50 = (n: GetContender) => percentile(samples[n], 50);
    const p99 = (n: GetContender) => percentile(samples[n], 99);
    const ratio = (n: GetContender) => p50(n) / p50('floor');
    return {
      title: 'Latency of one GET (posts.get)',
      method:
        `Sequential GETs of one post from a loopback node:http server (own process) answering fixed JSON: ` +
        `${rounds} interleaved rounds of ${perRound} per contender after a warm-up. Value: median; note: p99. ` +
        'Ratio: median ÷ floor median (lower is better).',
      unit: 'median',
      rows: names.map((n) => ({
        name: CONTENDER_NAMES[n],
        value: fmt.ms(p50(n)),
        ...(n === 'floor' ? {} : { ratio: fmt.x(ratio(n)) }),
        note: `p99 ${fmt.ms(p99(n))}`,
      })),
      target: 'ours ÷ floor ≤ 1.25, and below both peers’ ratios',
      met: ratio('ours') <= 1.25 && ratio('ours') < ratio('openai') && ratio('ours') < ratio('stripe'),
    };
  });
}

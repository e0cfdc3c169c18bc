/**
 * Throughput at 64 concurrent requests against the same loopback server and contenders as the latency
 * measure: 64 loops each awaiting one GET after another, completed requests per second.
 */
import { fmt, type Section } from '../lib/report.js';
import { median } from '../lib/stats.js';
import { CONTENDER_NAMES, withGetContenders, type GetContender } from '../lib/get-contenders.js';

const CONCURRENCY = 64;

async function requestsPerSecond(fn: () => Promise<unknown>, durationMs: number): Promise<number> {
  let done = 0;
  const start = performance.now();
  const end = start + durationMs;
  const loop = async () => {
    while (performance.now() < end) {
      await fn();
      done++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  return (done * 1000) / (performance.now() - start);
}

export async function measureThroughput({ quick }: { quick: boolean }): Promise<Section> {
  const rounds = quick ? 3 : 9;
  const roundMs = quick ? 600 : 1500;
  return withGetContenders(async ({ contenders, names, samples }) => {
    for (const name of names) await requestsPerSecond(contenders[name], roundMs / 2); // warm-up, opens 64 connections
    for (let round = 0; round < rounds; round++) {
      for (const name of names) samples[name].push(await requestsPerSecond(contenders[name], roundMs));
    }
    const rps = (n: GetContender) => median(samples[n]);
    const ratio = (n: GetContender) => rps(n) / rps('floor');
    return {
      title: `Throughput at ${CONCURRENCY} concurrent GETs`,
      method:
        `${CONCURRENCY} concurrent loops of GETs against the same loopback server, completed requests per second: ` +
        `median of ${rounds} interleaved rounds of ${roundMs} ms. Ratio: contender ÷ floor (higher is better). ` +
        'The server runs in its own process on the same 2 cores, so it caps every contender alike.',
      unit: 'requests/s',
      rows: names.map((n) => ({
        name: CONTENDER_NAMES[n],
        value: fmt.int(rps(n)),
        ...(n === 'floor' ? {} : { ratio: fmt.x(ratio(n)) }),
      })),
      target: '≥ 0.85x the floor',
      met: ratio('ours') >= 0.85,
    };
  });
}

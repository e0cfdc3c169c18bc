/**
 * Throughput at 64 concurrent requests against the same loopback server and contenders as the latency
 * measure: 64 loops each awaiting one GET after another, completed requests per second.
 *
 * Client (this process) and server (its own process) share the machine's cores, so a ratio can measure either
 * one. It is measured both ways: unpinned, and pinned with `taskset` (client on core 0, server on core 1), and
 * for each contender the CPU each side used says which one was the limit: a side at ~100% of its core is
 * CPU-bound. The verdicts come from the pinned run, where a client at 100% of its core makes the ratio the
 * client's (the unpinned run when taskset is missing, which the notes then say).
 * Targets (issue 16): posts.get ≥ 0.95x a plain ky GET's throughput, and ahead of openai-node on the ratio to
 * the fetch floor.
 */
import { collectGarbage } from '../lib/heap.js';
import { coreShare, ownCpuMs, pin, processCpuMs, tasksetAvailable } from '../lib/cpu.js';
import { fmt, ratioVerdict, type Section, type Verdict } from '../lib/report.js';
import { median } from '../lib/stats.js';
import { CONTENDER_NAMES, withGetContenders, type GetContender } from '../lib/get-contenders.js';

const CONCURRENCY = 64;
const CLIENT_CPU = '0';
const SERVER_CPU = '1';

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

/** One way of running (pinned or not): requests/s per contender, and the CPU each side used (ms per ms of wall time). */
interface Run {
  rps: Record<GetContender, number>;
  client: Record<GetContender, number | undefined>;
  server: Record<GetContender, number | undefined>;
}

/** Which side kept a contender from going faster: the one near a full core (with the pinned run, its own core). */
function limit(run: Run, n: GetContender): string {
  const [client, server] = [run.client[n] ?? Number.NaN, run.server[n] ?? Number.NaN];
  if (client >= 0.9 && !(server >= 0.9)) return 'client';
  if (server >= 0.9 && !(client >= 0.9)) return 'server';
  return client >= 0.9 ? 'both' : 'neither';
}

async function run({ quick, pinned }: { quick: boolean; pinned: boolean }): Promise<Run> {
  const rounds = quick ? 3 : 9;
  const roundMs = quick ? 600 : 1500;
  const restore = pinned ? pin(process.pid, CLIENT_CPU) : undefined;
  try {
    return await withGetContenders(
      async ({ contenders, names, samples, serverPid }) => {
        const wallMs = Object.fromEntries(names.map((n) => [n, 0])) as Record<GetContender, number>;
        const clientMs = { ...wallMs };
        const serverMs = { ...wallMs };
        for (const name of names) await requestsPerSecond(contenders[name], roundMs / 2); // warm-up, opens 64 connections
        for (let round = 0; round < rounds; round++) {
          // Each round starts with another contender and each contender's time with an empty heap: none pays for
          // the garbage of the one before it (with a fixed order, the same contender always followed the same one).
          for (const name of [...names.slice(round % names.length), ...names.slice(0, round % names.length)]) {
            collectGarbage();
            const [wall, client, server] = [performance.now(), ownCpuMs(), processCpuMs(serverPid)];
            samples[name].push(await requestsPerSecond(contenders[name], roundMs));
            wallMs[name] += performance.now() - wall;
            clientMs[name] += ownCpuMs() - client;
            serverMs[name] += (processCpuMs(serverPid) ?? Number.NaN) - (server ?? Number.NaN);
          }
        }
        const each = <T>(f: (n: GetContender) => T) => Object.fromEntries(names.map((n) => [n, f(n)])) as Record<GetContender, T>;
        return {
          rps: each((n) => median(samples[n])),
          client: each((n) => clientMs[n] / wallMs[n]),
          server: each((n) => (Number.isNaN(serverMs[n]) ? undefined : serverMs[n] / wallMs[n])),
        };
      },
      pinned ? { serverCpus: SERVER_CPU } : {},
    );
  } finally {
    if (restore !== undefined) pin(process.pid, restore);
  }
}

export async function measureThroughput({ quick }: { quick: boolean }): Promise<Section> {
  const unpinned = await run({ quick, pinned: false });
  const pinned = tasksetAvailable ? await run({ quick, pinned: true }) : undefined;
  const judged = pinned ?? unpinned;
  const names = Object.keys(unpinned.rps) as GetContender[];
  const ratio = (r: Run, n: GetContender) => r.rps[n] / r.rps.floor;
  const how = pinned === undefined ? 'unpinned' : 'pinned';
  const verdicts: Verdict[] = [
    ratioVerdict(`posts.get ≥ 0.95x a plain ky GET's 64-way throughput (${how})`, judged.rps.ours / judged.rps.kyPlain, 0.95, '≥'),
    {
      target: `posts.get ahead of openai-node on the ratio to the fetch floor (64-way throughput, ${how})`,
      measured: `${fmt.x(ratio(judged, 'ours'))}, openai-node ${fmt.x(ratio(judged, 'openai'))}`,
      met: ratio(judged, 'ours') > ratio(judged, 'openai'),
    },
  ];
  const rounds = quick ? 3 : 9;
  const roundMs = quick ? 600 : 1500;
  const sides = (r: Run, n: GetContender) => `client ${coreShare(r.client[n])}, server ${coreShare(r.server[n])}`;
  const bound = (r: Run) => {
    const by = new Map<string, GetContender[]>();
    for (const n of names) by.set(limit(r, n), [...(by.get(limit(r, n)) ?? []), n]);
    const side = (key: string) => (key === 'neither' ? 'neither side at a full core' : `${key} CPU-bound`);
    return [...by].map(([key, which]) => `${side(key)}: ${which.join(', ')}`).join('; ');
  };
  return {
    title: `Throughput at ${CONCURRENCY} concurrent GETs`,
    method:
      `${CONCURRENCY} concurrent loops of GETs against the same loopback server (own process), completed requests ` +
      `per second: median of ${rounds} interleaved rounds of ${roundMs} ms (each round starting with the next contender, each contender's time after a full GC), run twice: ` +
      (pinned === undefined
        ? 'pinned was not measured (taskset, from util-linux, is not installed here), so the value is unpinned. '
        : `pinned with taskset (client on core ${CLIENT_CPU}, server on core ${SERVER_CPU}: the value and ratio), then unpinned (the note). `) +
      'Ratio: contender ÷ floor (higher is better). The note gives the CPU each side used, as a share of one core: ' +
      'the side near 100% of its core is the limit.',
    unit: `requests/s (${how})`,
    rows: names.map((n) => ({
      name: CONTENDER_NAMES[n],
      value: fmt.int(judged.rps[n]),
      ...(n === 'floor' ? {} : { ratio: fmt.x(ratio(judged, n)) }),
      note:
        pinned === undefined
          ? sides(unpinned, n)
          : `${sides(pinned, n)}; unpinned ${fmt.int(unpinned.rps[n])}${n === 'floor' ? '' : ` (${fmt.x(ratio(unpinned, n))})`}, ${sides(unpinned, n)}`,
    })),
    target: verdicts.map((v) => v.target).join('; '),
    met: verdicts.every((v) => v.met),
    verdicts,
    notes: [
      ...(pinned === undefined ? ['taskset (util-linux) is not installed: the run could not be pinned.'] : []),
      ...(pinned === undefined ? [] : [`Pinned, which side limits each contender (≥ 90% of its core): ${bound(pinned)}.`]),
      `Unpinned, which side limits each contender (≥ 90% of a core): ${bound(unpinned)}.`,
      `Unpinned: posts.get ${fmt.x(unpinned.rps.ours / unpinned.rps.kyPlain)} a plain ky GET, ` +
        `${fmt.x(ratio(unpinned, 'ours'))} the floor (openai-node ${fmt.x(ratio(unpinned, 'openai'))}).`,
    ],
  };
}

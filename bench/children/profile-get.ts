/**
 * Child process of the cpu-profile measure: one contender's sequential GETs of one post under V8's sampling
 * profiler (node:inspector, started after the warm-up and stopped after the last call, so only the measured calls
 * are in it). Prints JSON on stdout: the calls made and, per owner of the code that ran (bench/measures/cpu-profile.ts
 * names them), the profiler's self time in µs.
 * `node --import tsx profile-get.ts <ours|kyPlain|oursNodeHttp> <origin> <calls>`
 *
 * `oursNodeHttp` is posts.get over a prototype fetch on node:http (`nodeHttpFetch` below): the stretch of issue 16,
 * measured here and not shipped (the closing note of issue 16 says why). It handles exactly what this benchmark
 * sends: a body-less GET over plain HTTP, abort through the request's signal, redirects not followed.
 */
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import type { PostSched as PostSchedClass } from '@postsched/sdk';
import { BENCH_TOKEN, kyAlone } from '../lib/ky-alone.js';
import { ownerOf, type Owner } from '../lib/owners.js';

const [mode, origin, callsArg] = process.argv.slice(2) as [string, string, string];
const calls = Number(callsArg);
const token = BENCH_TOKEN;

// The built package, as the latency measure loads it (bench/lib/get-contenders.ts says why not the sources).
const { PostSched } = (await import(new URL('../../dist/index.node.js', import.meta.url).href)) as { PostSched: typeof PostSchedClass };

const agent = new http.Agent({ keepAlive: true });

/** The prototype transport: a Response built from node:http's answer, its body streamed as it arrives. */
function nodeHttpFetch(input: Request | URL | string, init?: RequestInit): Promise<Response> {
  const request = input instanceof Request ? input : new Request(input, init);
  return new Promise((resolve, reject) => {
    const url = new URL(request.url);
    const outgoing = http.request(
      { agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: request.method, headers: Object.fromEntries(request.headers), signal: request.signal },
      (answer) => {
        const answerHeaders = new Headers();
        const raw = answer.rawHeaders;
        for (let i = 0; i < raw.length; i += 2) answerHeaders.append(raw[i]!, raw[i + 1]!);
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            answer.on('data', (chunk: Buffer) => controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
            answer.on('end', () => controller.close());
            answer.on('error', (error) => controller.error(error));
          },
          cancel: () => void answer.destroy(),
        });
        resolve(new Response(body, { status: answer.statusCode ?? 0, statusText: answer.statusMessage ?? '', headers: answerHeaders }));
      },
    );
    outgoing.on('error', (error) => reject(new TypeError('fetch failed', { cause: error })));
    outgoing.end();
  });
}

const contenders: Record<string, () => Promise<{ id: string }>> = {
  ours: (() => {
    const client = new PostSched({ baseUrl: origin, auth: token });
    return () => client.posts.get('p_1');
  })(),
  kyPlain: kyAlone(origin),
  oursNodeHttp: (() => {
    const client = new PostSched({ baseUrl: origin, auth: token, fetch: nodeHttpFetch });
    return () => client.posts.get('p_1');
  })(),
};
const get = contenders[mode];
if (get === undefined) throw new Error(`unknown contender ${mode}; known: ${Object.keys(contenders).join(', ')}`);

for (let i = 0; i < Math.max(2000, calls / 5); i++) {
  if ((await get()).id !== 'post_1') throw new Error(`${mode} did not return the post`);
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
// 100 µs between samples: a few thousand samples per contender even in --quick.
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
const cpuBefore = process.cpuUsage();
for (let i = 0; i < calls; i++) await get();
const cpu = process.cpuUsage(cpuBefore);
const { profile } = await session.post('Profiler.stop');
session.disconnect();

const selfUs: Partial<Record<Owner, number>> = {};
/** Self time of the SDK's own functions (dist/), by name, for the note that lists where ours goes. */
const ownFunctions: Record<string, number> = {};
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const samples = profile.samples ?? [];
const deltas = profile.timeDeltas ?? [];
for (let i = 0; i < samples.length; i++) {
  const frame = nodes.get(samples[i]!)!.callFrame;
  // A sample's time is the delta to the next one (V8 records the time since the previous sample with each).
  const us = deltas[i + 1] ?? 0;
  const owner = ownerOf(frame.url, frame.functionName, frame.lineNumber);
  selfUs[owner] = (selfUs[owner] ?? 0) + us;
  if (owner === 'sdk') ownFunctions[frame.functionName || '(anonymous)'] = (ownFunctions[frame.functionName || '(anonymous)'] ?? 0) + us;
}
agent.destroy();
process.stdout.write(`${JSON.stringify({ calls, cpuUs: cpu.user + cpu.system, selfUs, ownFunctions })}\n`);

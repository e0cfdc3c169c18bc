/**
 * `npm run bench` measures the SDK against its peers and the floor, side by side in one run, and writes
 * bench/RESULTS.md. `npm run bench -- --quick` is a short version (under a minute). Benchmarks never fail:
 * they print the truth; the verdict column says whether each target was met.
 * Bundle size, cold import, latency and throughput measure what we ship (dist/): when a selected measure needs it
 * and dist/ is missing or older than src/, `npm run build` runs first. The other measures run the sources through
 * tsx.
 * `--only=latency,throughput` runs some measures (and does not write RESULTS.md); with `--update` too, their
 * sections replace theirs in RESULTS.md, each ending with a line that names its run, and the other sections are
 * kept as they were. Each verdict line carries the 1-minute load average taken when its measure finished.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { ensureBuilt } from './lib/build.js';
import { measureAccessToken } from './measures/access-token.js';
import { measureBundles } from './measures/bundle.js';
import { measureColdImport } from './measures/cold-import.js';
import { measureCpuProfile } from './measures/cpu-profile.js';
import { measureFleet } from './measures/fleet.js';
import { measureGrants } from './measures/grants.js';
import { measureLatency } from './measures/latency.js';
import { measureRateLimit } from './measures/ratelimit.js';
import { measurePaginationHeap } from './measures/pagination-heap.js';
import { measureParseCost } from './measures/parse-cost.js';
import { measureSchedule } from './measures/schedule.js';
import { measureThroughput } from './measures/throughput.js';
import { measureUploadMemory } from './measures/upload-memory.js';
import { measureWebhooks } from './measures/webhooks.js';
import { toConsole, toMarkdown, type Section } from './lib/report.js';

const quick = process.argv.includes('--quick');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const update = process.argv.includes('--update');

/** `titled`: how its section titles start, to find them in RESULTS.md for `--update`. */
type Measure = { name: string; titled: string; usesDist?: boolean; run: () => Promise<Section | Section[]> };
const measures: Measure[] = [
  { name: 'webhooks', titled: 'Webhook verification', run: () => measureWebhooks({ quick }) },
  { name: 'latency', titled: 'Latency of one GET', usesDist: true, run: () => measureLatency({ quick }) },
  { name: 'throughput', titled: 'Throughput at', usesDist: true, run: () => measureThroughput({ quick }) },
  { name: 'cpu-profile', titled: 'Where the CPU of posts.get goes', usesDist: true, run: () => measureCpuProfile({ quick }) },
  { name: 'access-token', titled: 'getAccessToken()', run: () => measureAccessToken({ quick }) },
  { name: 'parse-cost', titled: 'Parse cost', run: () => measureParseCost({ quick }) },
  { name: 'upload-memory', titled: 'Peak memory', run: () => measureUploadMemory({ quick }) },
  { name: 'pagination-heap', titled: 'Heap while iterating', run: () => measurePaginationHeap({ quick }) },
  { name: 'schedule', titled: 'atLocalTime()', run: () => measureSchedule({ quick }) },
  { name: 'bundle', titled: 'Bundle size', usesDist: true, run: () => measureBundles() },
  { name: 'cold-import', titled: 'Cold import', usesDist: true, run: () => measureColdImport({ runs: quick ? 5 : 10 }) },
  { name: 'fleet', titled: 'Fleet:', usesDist: true, run: () => measureFleet({ quick }) },
  { name: 'ratelimit', titled: 'Rate limits:', usesDist: true, run: () => measureRateLimit({ quick }) },
  { name: 'grants', titled: 'Idle grants kept alive', run: () => measureGrants({ quick }) },
];

const loadAtStart = os.loadavg()[0]!;
const selected = measures.filter((m) => only === undefined || only.split(',').includes(m.name));
if (selected.length === 0) {
  console.error(`--only matched no measure; known: ${measures.map((m) => m.name).join(', ')}`);
  process.exit(1);
}
if (selected.some((m) => m.usesDist === true)) ensureBuilt();

const sections: Section[] = [];
for (const measure of selected) {
  try {
    const result = await measure.run();
    const loadAverage = os.loadavg()[0]!;
    for (const section of Array.isArray(result) ? result : [result]) {
      section.loadAverage ??= loadAverage;
      sections.push(section);
      console.log(toConsole(section));
    }
  } catch (error) {
    // A broken measure is reported, not hidden, and does not stop the others.
    const message = error instanceof Error ? error.message : String(error);
    console.error(`\n${measure.name}: could not be measured: ${message}`);
    sections.push({
      title: measure.name,
      method: 'The measure failed.',
      unit: '',
      rows: [{ name: 'error', value: message }],
      target: '',
      met: undefined,
    });
  }
}

const runLine =
  `\`npm run bench${quick ? ' -- --quick' : ''}\` on ${new Date().toISOString().slice(0, 10)}: ` +
  `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.platform()}. ` +
  `Load average (1 min) ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end`;
const header = [
  '# Benchmark results',
  '',
  `Written by ${runLine}, on ${os.cpus().length} cores: absolute numbers drift on a shared machine; each verdict ` +
    'comes from ratios measured in the same run (except the absolute targets: MB, KB, ms); each verdict line ' +
    'gives what decided it and the load average when its measure ran.',
].join('\n');
const results = new URL('./RESULTS.md', import.meta.url);
if (only === undefined) {
  writeFileSync(results, [toMarkdown(sections, header).trim(), ...unclaimed(readFileSync(results, 'utf8'))].join('\n\n') + '\n');
  console.log('\nWrote bench/RESULTS.md');
} else if (update) {
  writeFileSync(results, updatedResults(readFileSync(results, 'utf8')));
  console.log(`\nUpdated the sections of ${selected.map((m) => m.name).join(', ')} in bench/RESULTS.md`);
}

/**
 * The sections of RESULTS.md that no measure makes (figures a test prints, such as the retry budget's fleet count),
 * kept as they are after the measured ones: a run rewrites only what it measured.
 */
function unclaimed(previous: string): string[] {
  const parts = previous.split(/^(?=## )/m).slice(1);
  return parts.filter((part) => !measures.some((measure) => part.startsWith(`## ${measure.titled}`))).map((part) => part.trim());
}

/**
 * RESULTS.md with the sections of the selected measures replaced by this run's, in measure order, each ending
 * with a line that says which run measured it; the other sections are kept as they were.
 */
function updatedResults(previous: string): string {
  const [head, ...parts] = previous.split(/^(?=## )/m);
  const kept = parts.map((part) => ({ title: part.slice(3, part.indexOf('\n')), markdown: part.trim() }));
  const from = `_Measured by \`--only=${only} --update\`: ${runLine}._`;
  const blocks: string[] = [];
  for (const measure of measures) {
    if (selected.includes(measure)) {
      const fresh = sections.filter((section) => section.title.startsWith(measure.titled) || (section.title === measure.name && section.rows[0]?.name === 'error'));
      blocks.push(...fresh.map((section) => `${toMarkdown([section], '').trim()}\n\n${from}`));
    } else {
      blocks.push(...kept.filter((part) => part.title.startsWith(measure.titled)).map((part) => part.markdown));
    }
  }
  blocks.push(...unclaimed(previous));
  const note = 'A section that ends with a line _Measured by …_ comes from that later run of some measures.';
  const top = head!.trim().split('\n').filter((line) => line.trim() !== '' && !line.startsWith('Sections of ') && line !== note);
  return `${[top[0], '', ...top.slice(1), '', note].join('\n')}\n\n${blocks.join('\n\n')}\n`;
}

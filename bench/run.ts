/**
 * `npm run bench` measures the SDK against its peers and the floor, side by side in one run, and writes
 * bench/RESULTS.md. `npm run bench -- --quick` is a short version (under a minute). Benchmarks never fail:
 * they print the truth; the verdict column says whether each target was met.
 * Bundle size and cold import measure what we ship (dist/): when a selected measure needs it and dist/ is
 * missing or older than src/, `npm run build` runs first. The other measures run the sources through tsx.
 * `--only=latency,throughput` runs some measures (and does not write RESULTS.md).
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { ensureBuilt } from './lib/build.js';
import { measureAccessToken } from './measures/access-token.js';
import { measureBundles } from './measures/bundle.js';
import { measureColdImport } from './measures/cold-import.js';
import { measureLatency } from './measures/latency.js';
import { measurePaginationHeap } from './measures/pagination-heap.js';
import { measureThroughput } from './measures/throughput.js';
import { measureUploadMemory } from './measures/upload-memory.js';
import { measureWebhooks } from './measures/webhooks.js';
import { toConsole, toMarkdown, type Section } from './lib/report.js';

const quick = process.argv.includes('--quick');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);

type Measure = { name: string; usesDist?: boolean; run: () => Promise<Section | Section[]> };
const measures: Measure[] = [
  { name: 'webhooks', run: () => measureWebhooks({ quick }) },
  { name: 'latency', run: () => measureLatency({ quick }) },
  { name: 'throughput', run: () => measureThroughput({ quick }) },
  { name: 'access-token', run: () => measureAccessToken({ quick }) },
  { name: 'upload-memory', run: () => measureUploadMemory({ quick }) },
  { name: 'pagination-heap', run: () => measurePaginationHeap({ quick }) },
  { name: 'bundle', usesDist: true, run: () => measureBundles() },
  { name: 'cold-import', usesDist: true, run: () => measureColdImport({ runs: quick ? 5 : 10 }) },
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
    for (const section of Array.isArray(result) ? result : [result]) {
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

const header = [
  '# Benchmark results',
  '',
  `Written by \`npm run bench${quick ? ' -- --quick' : ''}\` on ${new Date().toISOString().slice(0, 10)}: ` +
    `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.platform()}.`,
  `Load average (1 min) ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end, on ` +
    `${os.cpus().length} cores: absolute numbers drift on a shared machine; each verdict comes from ratios ` +
    'measured in the same run (except the absolute targets: calls/s, MB, KB, ms).',
].join('\n');
if (only === undefined) {
  writeFileSync(new URL('./RESULTS.md', import.meta.url), toMarkdown(sections, header));
  console.log('\nWrote bench/RESULTS.md');
}

/**
 * `npm run bench` measures the SDK against its peers and the floor, side by side in one run, and writes
 * bench/RESULTS.md. `npm run bench -- --quick` is a short version (under a minute). Benchmarks never fail:
 * they print the truth; the verdict column says whether each target was met.
 * Run `npm run build` first (bundle size and cold import measure what we ship, in dist/).
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { measureBundles } from './measures/bundle.js';
import { measureColdImport } from './measures/cold-import.js';
import { toConsole, toMarkdown, type Section } from './lib/report.js';

const quick = process.argv.includes('--quick');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);

type Measure = { name: string; run: () => Promise<Section | Section[]> };
const measures: Measure[] = [
  { name: 'bundle', run: () => measureBundles() },
  { name: 'cold-import', run: () => measureColdImport({ runs: quick ? 5 : 10 }) },
];

const sections: Section[] = [];
for (const measure of measures) {
  if (only !== undefined && !only.split(',').includes(measure.name)) continue;
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
  'Absolute numbers drift on a shared machine; each verdict comes from ratios measured in the same run.',
].join('\n');
if (only === undefined) {
  writeFileSync(new URL('./RESULTS.md', import.meta.url), toMarkdown(sections, header));
  console.log('\nWrote bench/RESULTS.md');
}

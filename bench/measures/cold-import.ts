/** Cold import: a whole `node` process that imports one module, median wall time of N runs. */
import { spawnSync } from 'node:child_process';
import { median } from '../lib/stats.js';
import { fmt, type Section } from '../lib/report.js';

function processMs(args: string[]): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { stdio: 'ignore' });
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export async function measureColdImport({ runs }: { runs: number }): Promise<Section> {
  const importOf = (specifier: string) => ['--input-type=module', '-e', `await import(${JSON.stringify(specifier)})`];
  const contenders = {
    empty: [] as number[],
    ours: [] as number[],
    zod: [] as number[],
    openai: [] as number[],
    stripe: [] as number[],
  };
  // Interleaved runs, so a busy moment on the shared machine falls on every contender alike.
  for (let i = 0; i < runs; i++) {
    contenders.empty.push(processMs(['-e', '']));
    contenders.ours.push(processMs(importOf('@postsched/sdk')));
    contenders.zod.push(processMs(importOf('zod/mini')));
    contenders.openai.push(processMs(importOf('openai')));
    contenders.stripe.push(processMs(importOf('stripe')));
  }
  const empty = median(contenders.empty);
  const ours = median(contenders.ours);
  const zod = median(contenders.zod);
  const openai = median(contenders.openai);
  const stripe = median(contenders.stripe);
  const over = (ms: number) => `+${fmt.ms(ms - empty)}`;
  return {
    title: 'Cold import',
    method: `Whole process \`node --input-type=module -e "await import(...)"\`, median of ${runs} runs each, interleaved; the note is the time over an empty \`node -e ""\`. Ratio: ours ÷ peer (time over empty Node).`,
    unit: 'median',
    rows: [
      { name: 'node -e "" (floor)', value: fmt.ms(empty) },
      {
        name: '@postsched/sdk',
        value: fmt.ms(ours),
        note: over(ours),
      },
      // zod is a dependency (not bundled): its ESM graph, every locale included, loads with ours. An app that
      // already uses zod pays it once, for both.
      { name: 'zod/mini alone (a dependency of ours)', value: fmt.ms(zod), note: `${over(zod)}; ours without it +${fmt.ms(ours - zod)}` },
      { name: 'openai', value: fmt.ms(openai), ratio: fmt.x((ours - empty) / (openai - empty)), note: over(openai) },
      { name: 'stripe', value: fmt.ms(stripe), ratio: fmt.x((ours - empty) / (stripe - empty)), note: over(stripe) },
    ],
    target: 'under openai-node in the same run (time over empty Node)',
    met: ours - empty < openai - empty,
  };
}

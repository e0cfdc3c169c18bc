#!/usr/bin/env node
// Bundle budgets (issue 7 / benchmarks issue 6): each public entry as a browser bundle, dependencies included,
// `esbuild --bundle --minify`, then gzip. Exits 1 when an entry is over its budget. Run after `npm run build`.
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const budgets = [
  { entry: '@postsched/sdk', file: 'dist/index.js', budgetBytes: 20 * 1024 },
  { entry: '@postsched/sdk/webhooks', file: 'dist/webhooks/index.js', budgetBytes: 1.5 * 1024 },
];

let failed = false;
for (const { entry, file, budgetBytes } of budgets) {
  const result = await build({
    entryPoints: [file],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'error',
  });
  const code = result.outputFiles[0].contents;
  const gzipped = gzipSync(code).length;
  const ok = gzipped <= budgetBytes;
  failed ||= !ok;
  console.log(
    `${ok ? 'ok  ' : 'OVER'} ${entry.padEnd(26)} ${(code.length / 1024).toFixed(1).padStart(6)} KB min  ` +
      `${(gzipped / 1024).toFixed(2).padStart(6)} KB gz  (budget ${(budgetBytes / 1024).toFixed(1)} KB gz)`,
  );
}
process.exit(failed ? 1 : 0);

#!/usr/bin/env node
// Bundle budgets (issues 6 and 7): each public entry as a browser bundle, dependencies included,
// `esbuild --bundle --minify`, then gzip. Exits 1 when an entry is over its budget. Run after `npm run build`.
import { bundleSize } from './bundle-size.mjs';

const budgets = [
  { entry: '@postsched/sdk', file: 'dist/index.js', budgetBytes: 20 * 1024 },
  { entry: '@postsched/sdk/webhooks', file: 'dist/webhooks/index.js', budgetBytes: 1.5 * 1024 },
];

let failed = false;
for (const { entry, file, budgetBytes } of budgets) {
  const { minBytes, gzipBytes } = await bundleSize({ file });
  const ok = gzipBytes <= budgetBytes;
  failed ||= !ok;
  console.log(
    `${ok ? 'ok  ' : 'OVER'} ${entry.padEnd(26)} ${(minBytes / 1024).toFixed(1).padStart(6)} KB min  ` +
      `${(gzipBytes / 1024).toFixed(2).padStart(6)} KB gz  (budget ${(budgetBytes / 1024).toFixed(1)} KB gz)`,
  );
}
process.exit(failed ? 1 : 0);

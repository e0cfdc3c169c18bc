/**
 * Issue 22: the default entries (browser, workers) hold no dynamic `import()`, so every bundler makes one file of an
 * app that imports them: a lazy `import('ky')` made webpack's `webworker` target emit a second chunk that workerd
 * could not load, and Rollup refuse `output.file`. Here esbuild bundles each entry's sources with code splitting
 * on: one output file means nothing is loaded lazily. (`npm run test:runtimes` bundles the packed package with
 * Rollup and webpack and runs both in workerd.)
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the default entries bundle to one file', () => {
  it.each(['src/index.ts', 'src/webhooks/index.ts'])('%s has no dynamic import', async (entry) => {
    const result = await build({
      entryPoints: [`${root}/${entry}`],
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'browser',
      outdir: `${root}/.tmp/one-file`,
      write: false,
      logLevel: 'silent',
    });
    expect(result.outputFiles.map((file) => file.path.slice(file.path.lastIndexOf('/') + 1))).toEqual(['index.js']);
  });
});

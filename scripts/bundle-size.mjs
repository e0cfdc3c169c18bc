// Shared by scripts/check-size.mjs and the benchmarks: the size of a browser bundle of one module,
// dependencies included, as `esbuild --bundle --minify` and then gzip would give it.
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/**
 * @param {{ file?: string, specifier?: string, conditions?: string[] }} what a file path, or a package specifier
 * @returns {Promise<{ minBytes: number, gzipBytes: number }>}
 */
export async function bundleSize({ file, specifier, conditions }) {
  const result = await build({
    ...(file !== undefined
      ? { entryPoints: [file] }
      : { stdin: { contents: `export * from ${JSON.stringify(specifier)};`, resolveDir: process.cwd() } }),
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    ...(conditions === undefined ? {} : { conditions }),
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0].contents;
  return { minBytes: code.length, gzipBytes: gzipSync(code).length };
}

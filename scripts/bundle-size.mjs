// Shared by scripts/check-size.mjs and the benchmarks: the size of a browser bundle of one module,
// dependencies included, as `esbuild --bundle --minify` and then gzip would give it, and where its bytes go.
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const KB = 1024;

/**
 * What users ship, each with its target (issue 38: ky, zod and oauth4webapi counted as a consumer's bundler sees
 * them, zod resolved from node_modules, ky and oauth4webapi from the build): the bundle a user's bundler makes of these imports.
 * `breakdown` says how `npm run check:size` groups its bytes (see `bundleBreakdown`).
 */
export const USER_BUNDLES = [
  { label: 'whole main entry (export *)', file: 'dist/index.js', target: 40 * KB, breakdown: 'dependency' },
  {
    label: 'server app: { OAuthClient, TokenManager, PostSched }',
    file: 'dist/index.js',
    names: ['OAuthClient', 'TokenManager', 'PostSched'],
    target: 38 * KB,
    breakdown: 'dependency',
  },
  {
    label: 'webhook verifier alone: { verifyWebhook }',
    file: 'dist/webhooks/index.js',
    names: ['verifyWebhook'],
    target: 8 * KB,
    breakdown: 'file',
  },
];

/** The dependencies in a user's bundle (tsup.config.ts: ky and oauth4webapi bundled, zod a dependency), always listed, even at 0 bytes. */
export const DEPENDENCIES = ['ky', 'zod', 'oauth4webapi'];

/** Groups a source path by dependency (its package) or by folder of src/ (`'dependency'`), or by file (`'file'`). */
export function groupOf(kind) {
  return (path) => {
    const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
    if (dependency !== undefined) return dependency;
    if (kind === 'file' || !path.startsWith('src/')) return path;
    const folder = /^src\/([^/]+)\//.exec(path)?.[1];
    return folder === undefined ? 'src/*.ts (top-level files)' : `src/${folder}`;
  };
}

/** The builds of tsup.config.ts (TypeScript: compiled as tsup would, into `tmpDir`), for a build of its own elsewhere. */
export async function tsupConfigs(tmpDir = '.tmp') {
  const compiled = join(tmpDir, `tsup.config.${process.pid}.mjs`);
  await build({
    entryPoints: ['tsup.config.ts'],
    outfile: compiled,
    bundle: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    // It reads files beside itself (package.json): it runs from .tmp/ as if it were where it is.
    define: { 'import.meta.url': JSON.stringify(pathToFileURL('tsup.config.ts').href) },
    logLevel: 'silent',
  });
  return (await import(`${pathToFileURL(compiled).href}?${Date.now()}`)).default;
}

/**
 * Builds the ESM entries exactly as `npm run build` does (tsup.config.ts: the same tree-shaking and chunks), but
 * with source maps and no declarations, into `outDir`, so that a bundle of them can be traced back to src/ and
 * node_modules/. The package itself ships no source maps.
 * @returns {Promise<string>} outDir
 */
export async function buildWithSourceMaps(outDir = '.tmp/size-map') {
  const { build: tsup } = await import('tsup');
  const esm = (await tsupConfigs(join(outDir, '..'))).find((config) => config.format === 'esm' && config.splitting);
  await tsup({ ...esm, config: false, dts: false, sourcemap: true, clean: true, outDir, silent: true });
  return outDir;
}

/**
 * An esbuild plugin that bundles the build's error classes as one minimal `ValidationError` (an Error with a `path`):
 * what an entry costs without them. Issue 22 makes the error classes tree-shakable (`ValidationError` alone ≤ 0.5 KB
 * gz); until then importing `ValidationError` alone ships every class (each one's computed `static [ERROR_ID]`).
 */
export const STUB_ERROR_CLASSES = {
  name: 'stub-error-classes',
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/]chunk-[^/\\]+\.js$/ }, async ({ path }) => {
      if (!/\bValidationError = class\b|\bclass ValidationError\b/.test(await readFile(path, 'utf8'))) return undefined;
      return { contents: 'export class ValidationError extends Error { constructor(m, path = []) { super(m); this.path = path; } }', loader: 'js' };
    });
  },
};

/** The esbuild options a user's bundler comes closest to: one browser ESM file, minified. */
function options({ file, specifier, names, conditions, plugins, platform = 'browser', external }) {
  const from = JSON.stringify(specifier ?? (names === undefined ? undefined : `./${file}`));
  return {
    ...(file !== undefined && names === undefined
      ? { entryPoints: [file] }
      : { stdin: { contents: `export ${names === undefined ? '*' : `{ ${names.join(', ')} }`} from ${from};`, resolveDir: process.cwd() } }),
    bundle: true,
    minify: true,
    format: 'esm',
    // `node` for the Node-only entries (/redis, /postgres): Node's built-in modules stay imports, as in a server bundle.
    platform,
    // A user's bundler does not read this repository's tsconfig.json, whose `paths` point the package at the sources.
    tsconfigRaw: '{}',
    ...(conditions === undefined ? {} : { conditions }),
    ...(plugins === undefined ? {} : { plugins }),
    // A peer dependency the app has anyway (`@opentelemetry/api` of the otel entry) stays an import.
    ...(external === undefined ? {} : { external }),
    write: false,
    logLevel: 'silent',
  };
}

/**
 * @param {{ file?: string, specifier?: string, names?: string[], conditions?: string[], plugins?: import('esbuild').Plugin[], platform?: 'browser' | 'node', external?: string[] }} what
 *   a file path, or a package specifier; with `names`, only those exports of it (what a user's bundle of that import
 *   keeps); `plugins` change what is bundled (STUB_ERROR_CLASSES); `platform` 'node' for a Node-only entry;
 *   `external`: packages left as imports
 * @returns {Promise<{ minBytes: number, gzipBytes: number }>}
 */
export async function bundleSize(what) {
  const result = await build(options(what));
  const code = result.outputFiles[0].contents;
  return { minBytes: code.length, gzipBytes: gzipSync(code).length };
}

/**
 * Where a bundle's bytes go: the same bundle built with a source map, each output byte charged to the source
 * file it came from, grouped by `groupOf(path)` (paths relative to the working directory).
 * - `minBytes`: exact, the output bytes mapped to the group.
 * - `gzipBytes`: the group's cost in the gzip stream, in output order: for each run of its bytes, gzip of the
 *   bundle up to the run's end minus gzip up to its start. The groups add up to the whole gzip size (the
 *   gzip header and the output esbuild maps to no source, its helpers, fall under "(esbuild helpers, no
 *   source)"); text repeated across groups is charged to the first one in the file.
 * @param {{ file?: string, specifier?: string, names?: string[], conditions?: string[] }} what as `bundleSize`
 * @param {(path: string) => string} groupOf
 * @returns {Promise<{ minBytes: number, gzipBytes: number, groups: { name: string, minBytes: number, gzipBytes: number }[] }>}
 */
export async function bundleBreakdown(what, groupOf) {
  const result = await build({ ...options(what), sourcemap: 'external', outdir: 'out' });
  const code = result.outputFiles.find((f) => f.path.endsWith('.js')).text;
  const map = JSON.parse(result.outputFiles.find((f) => f.path.endsWith('.map')).text);
  // esbuild's default charset is ASCII (non-ASCII is escaped), so columns are byte offsets.
  const sources = map.sources.map((path) => groupOf(relative(process.cwd(), new URL(path, `file://${process.cwd()}/out/`).pathname)));
  const runs = []; // [start offset, group] in output order, merged when the group does not change
  const mark = (offset, group) => {
    if (runs.length > 0 && runs.at(-1)[1] === group) return;
    if (runs.length > 0 && runs.at(-1)[0] === offset) runs.pop();
    runs.push([offset, group]);
  };
  let lineStart = 0;
  let source = 0;
  const lines = map.mappings.split(';');
  const codeLines = code.split('\n');
  for (let line = 0; line < lines.length; line++) {
    let column = 0;
    mark(lineStart, NO_SOURCE);
    for (const segment of lines[line].split(',')) {
      if (segment === '') continue;
      const fields = decodeVlq(segment);
      column += fields[0];
      if (fields.length === 1) {
        mark(lineStart + column, NO_SOURCE);
        continue;
      }
      source += fields[1];
      mark(lineStart + column, sources[source]);
    }
    lineStart += (codeLines[line]?.length ?? 0) + 1;
  }
  const bytes = Buffer.from(code);
  const gzipUpTo = (offset) => gzipSync(bytes.subarray(0, offset)).length;
  const groups = new Map([[NO_SOURCE, { name: NO_SOURCE, minBytes: 0, gzipBytes: gzipUpTo(0) }]]);
  let before = gzipUpTo(0);
  for (let i = 0; i < runs.length; i++) {
    const [start, name] = runs[i];
    const end = i + 1 < runs.length ? runs[i + 1][0] : bytes.length;
    const after = gzipUpTo(end);
    const group = groups.get(name) ?? { name, minBytes: 0, gzipBytes: 0 };
    group.minBytes += end - start;
    group.gzipBytes += after - before;
    groups.set(name, group);
    before = after;
  }
  return { minBytes: bytes.length, gzipBytes: before, groups: [...groups.values()].sort((a, b) => b.gzipBytes - a.gzipBytes) };
}

const NO_SOURCE = '(esbuild helpers, no source)';
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The numbers of one source map segment (base64 VLQ, source map v3). */
function decodeVlq(segment) {
  const values = [];
  let value = 0;
  let shift = 0;
  for (const char of segment) {
    const digit = BASE64.indexOf(char);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
    } else {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return values;
}

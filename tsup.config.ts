import { readFileSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';
import { DEPENDENCY_CUTS } from './scripts/dependency-cuts.mjs';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

// Entry names are the public entry points of package.json "exports"; the `*.node` variants differ only in
// the webhook HMAC backend (node:crypto instead of Web Crypto).
const entry = {
  index: 'src/index.ts',
  'index.node': 'src/index.node.ts',
  'webhooks/index': 'src/webhooks/index.ts',
  'webhooks/node': 'src/webhooks/node.ts',
  'testing/index': 'src/testing/index.ts',
  'redis/index': 'src/redis/index.ts',
  'postgres/index': 'src/postgres/index.ts',
  'schedule/index': 'src/schedule/index.ts',
  // Node, Bun, Deno: `@opentelemetry/api` (a peer dependency, so never bundled) and `node:diagnostics_channel`.
  'otel/index': 'src/otel/index.ts',
};

/**
 * ky for the request path, the package's private import `#ky` (package.json "imports"): kept as `#ky` in every
 * chunk, so that the runtime picks its file: `http/ky` (ky loaded with the SDK: Web builds, one file for every
 * bundler) or `http/ky.node` (ky loaded on the first request: Node, Bun, Deno; see src/http/ky.node.ts).
 */
const kyEntries = { 'http/ky': 'src/http/ky.ts', 'http/ky.node': 'src/http/ky.node.ts' };

/**
 * The runtime dependencies are bundled (tree-shaken) into both builds (zod stays listed for the day a part uses it
 * again; no file of src/ imports it since the stored-token check moved to src/oauth/token-set.ts):
 * - cold import: ky alone is 15 ESM files; one parsed chunk loads far faster (bench/RESULTS.md);
 * - ky and oauth4webapi ship ESM only, and `require()` of ESM works only from Node 20.19 on;
 * - users install nothing beyond this package.
 */
const bundled = ['ky', 'oauth4webapi', 'zod'];

// The SDK's version, written into the User-Agent (src/core/user-agent.ts) at build time, not read from disk at run time.
const common: Options = {
  entry,
  dts: true,
  sourcemap: false,
  target: 'es2022',
  treeshake: true,
  define: { __SDK_VERSION__: JSON.stringify(version) },
  // Code of ky and oauth4webapi that the SDK never reaches, left out of the bundles: scripts/dependency-cuts.mjs.
  esbuildPlugins: DEPENDENCY_CUTS,
};

export default defineConfig([
  { ...common, entry: { ...entry, 'http/ky': kyEntries['http/ky'] }, format: 'esm', splitting: true, clean: true, noExternal: bundled, external: ['#ky'] },
  // The Node variant apart, unsplit: ky is bundled into it behind esbuild's lazy initialiser (its `require`). Split
  // with the Web variant, ky would sit in a shared chunk that the Web variant initialises by a call of its own, which
  // webpack drops from a package marked `sideEffects: false`.
  { ...common, entry: { 'http/ky.node': kyEntries['http/ky.node'] }, format: 'esm', noExternal: bundled },
  { ...common, entry: { ...entry, ...kyEntries }, format: 'cjs', noExternal: bundled, external: ['#ky'] },
  // The `postsched` executable (package.json "bin"): Node only, ESM, no types; its hashbang makes tsup mark it executable.
  { ...common, entry: { 'cli/index': 'src/cli/index.ts' }, dts: false, format: 'esm', platform: 'node', splitting: false, noExternal: bundled },
]);

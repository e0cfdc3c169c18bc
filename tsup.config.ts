import { readFileSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

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
  'tools/index': 'src/tools/index.ts',
  // Node, Bun, Deno: `@opentelemetry/api` (a peer dependency, so never bundled) and `node:diagnostics_channel`.
  'otel/index': 'src/otel/index.ts',
};

/**
 * Bundled or external, by who must keep working (each library as published: nothing in this repository rewrites its
 * code):
 * - zod ships ESM and CJS, so every consumer can load it: a dependency, left external, so that an app that uses zod
 *   itself carries one copy.
 * - ky and oauth4webapi ship ESM only. As dependencies they would break the users who cannot load ESM from CJS:
 *   `require` on Node 20.0–20.18 (`require(esm)` exists from 20.19), and jest in its default CJS mode, which never
 *   loads ESM from node_modules (jestjs/jest#16266; test/jest-user/). So both are bundled, unpatched, into both
 *   builds (ESM too: an app that both imports and requires the SDK runs one ky). The cost: a security release of
 *   either reaches users through a release of the SDK.
 */
const bundled = ['ky', 'oauth4webapi'];
const external = ['zod'];

// The SDK's version, written into the User-Agent (src/core/user-agent.ts) at build time, not read from disk at run time.
const common: Options = {
  entry,
  dts: true,
  sourcemap: false,
  target: 'es2022',
  treeshake: true,
  define: { __SDK_VERSION__: JSON.stringify(version) },
  noExternal: bundled,
  external,
};

export default defineConfig([
  { ...common, format: 'esm', splitting: true, clean: true },
  { ...common, format: 'cjs' },
  // The `postsched` executable (package.json "bin"): Node only, ESM, no types; its hashbang makes tsup mark it executable.
  { ...common, entry: { 'cli/index': 'src/cli/index.ts' }, dts: false, format: 'esm', platform: 'node', splitting: false },
]);

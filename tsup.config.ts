import { defineConfig, type Options } from 'tsup';

// Entry names are the public entry points of package.json "exports"; the `*.node` variants differ only in
// the webhook HMAC backend (node:crypto instead of Web Crypto).
const entry = {
  index: 'src/index.ts',
  'index.node': 'src/index.node.ts',
  'webhooks/index': 'src/webhooks/index.ts',
  'webhooks/node': 'src/webhooks/node.ts',
  'testing/index': 'src/testing/index.ts',
  'redis/index': 'src/redis/index.ts',
};

const common: Options = { entry, dts: true, sourcemap: false, target: 'es2022', treeshake: true };

export default defineConfig([
  { ...common, format: 'esm', splitting: true, clean: true },
  // ky and oauth4webapi ship ESM only. `require()` of ESM works from Node 20.19 on; bundling them into the
  // CommonJS build keeps `require('@postsched/sdk')` working on every Node 20.
  { ...common, format: 'cjs', noExternal: ['ky', 'oauth4webapi'] },
]);

import { defineConfig } from 'tsup';

// One build, two formats. Entry names are the public entry points of package.json "exports";
// the `*.node` variants differ only in the webhook HMAC backend (node:crypto instead of Web Crypto).
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'index.node': 'src/index.node.ts',
    'webhooks/index': 'src/webhooks/index.ts',
    'webhooks/node': 'src/webhooks/node.ts',
    'testing/index': 'src/testing/index.ts',
    'redis/index': 'src/redis/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  splitting: true,
  sourcemap: false,
  clean: true,
  target: 'es2022',
  treeshake: true,
});

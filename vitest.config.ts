import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests import the package by its public name, as users do; it resolves to the source.
    alias: [
      { find: /^@postsched\/sdk$/, replacement: src('index.node.ts') },
      { find: /^@postsched\/sdk\/webhooks$/, replacement: src('webhooks/node.ts') },
      { find: /^@postsched\/sdk\/testing$/, replacement: src('testing/index.ts') },
      { find: /^@postsched\/sdk\/redis$/, replacement: src('redis/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    setupFiles: ['./test/support/preload-ky.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

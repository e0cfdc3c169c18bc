/** `npm run test:load`: the load test at full size (10,000 calls at concurrency 100), alone. */
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: ['test/load/**/*.test.ts'],
      env: { POSTSCHED_LOAD: 'full' },
      testTimeout: 300_000,
    },
  }),
);

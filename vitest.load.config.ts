/** `npm run test:load`: the load test at full size (10,000 calls at concurrency 100), alone. */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// Spread, not mergeConfig: mergeConfig would append to `include` and run the whole suite.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/load/**/*.test.ts'],
    env: { POSTSCHED_LOAD: 'full' },
    testTimeout: 300_000,
  },
});

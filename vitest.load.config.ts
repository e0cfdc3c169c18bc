/** `npm run test:load`: the load test at full size (10,000 calls at concurrency 100), alone. */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// Spread, not mergeConfig: mergeConfig would append to `include` and run the whole suite. The profile matrix
// (`projects`) is left out: the load test runs once.
const { projects: _matrix, ...test } = base.test ?? {};

export default defineConfig({
  ...base,
  test: {
    ...test,
    include: ['test/load/**/*.test.ts'],
    globalSetup: [], // the load test needs neither redis-server nor chromium
    env: { POSTSCHED_LOAD: 'full' },
    testTimeout: 300_000,
  },
});

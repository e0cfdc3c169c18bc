import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

// The tests that run against the fake service run once per wire profile of the fake (issue 11): `full` answers
// every field the SDK assumes, `minimal` only what the spec gives, `noisy` (seeded) garbles the assumed fields.
// The webhook example tests never call the fake, so a second and third run would prove nothing.
const AGAINST_THE_FAKE = ['test/integration/**/*.test.ts', 'test/examples/**/*.test.ts'];
const profile = (name: 'minimal' | 'noisy') => ({
  extends: true as const,
  test: { name, include: AGAINST_THE_FAKE, exclude: ['test/examples/webhooks-*.test.ts'], env: { POSTSCHED_FAKE_PROFILE: name } },
});

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  // The build writes the version into the User-Agent; the tests run the sources, so they get it the same way.
  define: { __SDK_VERSION__: JSON.stringify(version) },
  resolve: {
    // Tests import the package by its public name, as users do; it resolves to the source.
    alias: [
      { find: /^@postsched\/sdk$/, replacement: src('index.node.ts') },
      { find: /^@postsched\/sdk\/webhooks$/, replacement: src('webhooks/node.ts') },
      { find: /^@postsched\/sdk\/testing$/, replacement: src('testing/index.ts') },
      { find: /^@postsched\/sdk\/redis$/, replacement: src('redis/index.ts') },
      { find: /^@postsched\/sdk\/postgres$/, replacement: src('postgres/index.ts') },
      { find: /^@postsched\/sdk\/schedule$/, replacement: src('schedule/index.ts') },
      { find: /^@postsched\/sdk\/tools$/, replacement: src('tools/index.ts') },
      { find: /^@postsched\/sdk\/otel$/, replacement: src('otel/index.ts') },
    ],
  },
  test: {
    // No root `include`: `extends: true` would add it to every project's own (arrays are merged).
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Provisions redis-server, PostgreSQL and chromium once per run (installs them on a fresh Debian machine as root).
    globalSetup: ['./test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'full', include: ['test/**/*.test.ts'], env: { POSTSCHED_FAKE_PROFILE: 'full' } } },
      profile('minimal'),
      profile('noisy'),
    ],
  },
});

/**
 * vitest's global set-up: runs once before any test file, for `npm test` and for any `npx vitest run <files>`.
 * It provisions the programs the tests need (test/support/test-tools.ts) and hands their paths to the tests,
 * which read them with `inject('redisServerBin')` / `inject('chromiumBin')` / `inject('postgresBinDir')`.
 */
import type { TestProject } from 'vitest/node';
import { provisionTestTools, TestToolsError } from './test-tools.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The `redis-server` to start (REDIS_SERVER_BIN, the PATH, or just installed). */
    redisServerBin: string;
    /** The Chromium to drive with playwright-core (CHROMIUM_BIN, the PATH, or just installed). */
    chromiumBin: string;
    /** The folder of PostgreSQL's initdb, pg_ctl and postgres (POSTGRES_BIN_DIR, the PATH, /usr/lib/postgresql/<v>/bin). */
    postgresBinDir: string;
  }
}

/** Set-up runs once per vitest project (the wire-profile matrix): provision once per run, on the first. */
const ONCE = Symbol.for('postsched.testTools');
type Provisioned = ReturnType<typeof provisionTestTools>;

export default async function setup(project: TestProject): Promise<void> {
  let paths: Awaited<Provisioned>;
  try {
    const memo = globalThis as { [ONCE]?: Provisioned };
    paths = await (memo[ONCE] ??= provisionTestTools());
  } catch (error) {
    if (!(error instanceof TestToolsError)) throw error;
    // One message and a non-zero exit. Thrown, vitest would bury it under "No test files found" and a
    // "0 failed" summary line; no test has started yet, so there is nothing to clean up.
    process.stderr.write(`\n${error.message}\n\n`);
    process.exit(1);
  }
  project.provide('redisServerBin', paths.redisServerBin);
  project.provide('chromiumBin', paths.chromiumBin);
  project.provide('postgresBinDir', paths.postgresBinDir);
}

/**
 * A jest user's project, beside the vitest one (test/http/first-call-fake-timers.test.ts): jest in its default CJS
 * mode, msw 2.11.2, and the SDK as `npm pack` packs it, built by tsup.config.ts (without declarations), unpacked into
 * the project's node_modules. The project (project/: package.json `"type": "commonjs"`, jest.config.js, first-call.test.js)
 * runs in a copy under .tmp/; jest and msw come from the repository's node_modules (devDependencies: `jest`, and
 * `msw-2.11.2`, msw pinned under an alias), so nothing is fetched at test time. Its test makes a call, a retry and a
 * refresh under jest's fake timers: an ESM-only library `require`d by the build, or a load of anything on the first
 * call that a fake clock does not drive, fails it.
 */
import { execFile as execFileCb } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { installPackedSdk } from '../support/packed-sdk.js';

const execFile = promisify(execFileCb);
const root = fileURLToPath(new URL('../..', import.meta.url));
const work = join(root, '.tmp', `jest-user-${process.pid}`);
const project = join(work, 'project');

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  cpSync(join(root, 'test/jest-user/project'), project, { recursive: true });
  await installPackedSdk(work, project);
}, 240_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

it('passes a CJS jest project with msw 2.11.2: a call, a retry and a refresh under fake timers', async () => {
  const jest = join(root, 'node_modules/jest/bin/jest.js');
  const result = await execFile(process.execPath, [jest, '--ci', '--json'], { cwd: project, timeout: 120_000 }).catch(
    (error: { stdout?: string; stderr?: string }) => error,
  );
  const report = JSON.parse(result.stdout ?? '{}') as { numPassedTests?: number; numFailedTests?: number; numTotalTests?: number };
  expect({ passed: report.numPassedTests, failed: report.numFailedTests }, result.stderr).toEqual({ passed: 3, failed: 0 });
}, 180_000);

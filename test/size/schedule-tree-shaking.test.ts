/**
 * @postsched/sdk/schedule is its own entry: the main entry's bundle holds nothing of it, and it holds nothing of
 * the HTTP or OAuth parts (ky, zod, oauth4webapi). Bundled from source with esbuild for the browser platform, as a
 * user's bundler would: a `node:` import would fail the build.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

async function bundle(entry: string): Promise<string> {
  const result = await build({ entryPoints: [`${root}/${entry}`], bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent' });
  return result.outputFiles[0]!.text;
}

/** Strings only the schedule code has. */
const SCHEDULE = ['happens twice', 'supportedValuesOf', 'hourCycle'];
/** Strings only each dependency has (as in tree-shaking.test.ts). */
const DEPENDENCIES = ['WebKitFormBoundary', 'OAUTH_INVALID_RESPONSE', '__zod_globalConfig'];

describe('the schedule entry and the main entry tree-shake apart', () => {
  it('the main entry holds nothing of the schedule', async () => {
    const main = await bundle('src/index.ts');
    for (const marker of SCHEDULE) expect(main).not.toContain(marker);
  });

  it('the schedule entry holds its code and none of ky, zod or oauth4webapi', async () => {
    const schedule = await bundle('src/schedule/index.ts');
    for (const marker of SCHEDULE) expect(schedule).toContain(marker);
    for (const marker of DEPENDENCIES) expect(schedule).not.toContain(marker);
  });
});

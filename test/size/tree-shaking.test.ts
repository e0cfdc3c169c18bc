/**
 * The build puts the whole main entry in one chunk, so a bundler can drop an unused export only if no top-level
 * statement of that chunk has side effects. These tests rebuild that situation with esbuild (the source bundled
 * to one ESM file, dependencies external) and check what a user's bundle of one import keeps.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
let chunk = '';

beforeAll(async () => {
  const result = await build({
    entryPoints: [`${root}/src/index.ts`],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    external: ['ky', 'oauth4webapi', 'zod', 'zod/*'],
    write: false,
    logLevel: 'silent',
  });
  chunk = result.outputFiles[0]!.text;
});

/** Code of each dependency that only that dependency has (found in its minified bundle). */
const MARKERS = { ky: 'WebKitFormBoundary', oauth4webapi: 'OAUTH_INVALID_RESPONSE', zod: '__zod_globalConfig' };

/** The dependencies a user's bundle keeps when it imports only `names` from the one-chunk main entry. */
async function keptDependencies(names: string): Promise<string> {
  const result = await build({
    stdin: { contents: `import { ${names} } from 'sdk'; console.log(${names});`, resolveDir: root },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    plugins: [
      {
        name: 'one-chunk',
        setup(b) {
          b.onResolve({ filter: /^sdk$/ }, () => ({ path: 'sdk', namespace: 'one-chunk', sideEffects: false }));
          b.onLoad({ filter: /.*/, namespace: 'one-chunk' }, () => ({ contents: chunk, loader: 'js', resolveDir: root }));
        },
      },
    ],
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.text;
  return Object.entries(MARKERS)
    .filter(([, marker]) => code.includes(marker))
    .map(([name]) => name)
    .join(' ');
}

describe('tree-shaking of the main entry', () => {
  it.each([
    ['APIError', ''],
    ['ValidationError', ''], // verifyWebhook left the main entry (issue 22): test/size/webhooks-tree-shaking.test.ts
    // zod (external: a dependency) checks the TokenSet (src/oauth/token-set.ts) and the answers (src/resources).
    ['TokenManager, MemoryTokenStore', 'zod'],
    ['OAuthClient', 'oauth4webapi'],
    ['PostSched', 'ky zod'],
  ])('importing only %s keeps only the dependencies it uses (%j)', async (names, expected) => {
    expect(await keptDependencies(names)).toBe(expected);
  });
});

/**
 * The published declarations, not the sources: `stripInternal` drops every `@internal` member, so a constructor
 * marked so left `Posts`, `Accounts`, `Media`, `Analytics`, `Paginator` and `APIPromise` with the implicit one:
 * `new Posts()` compiled under `tsc --strict`, then threw "Cannot read properties of undefined". Their constructors
 * are private now; this emits the declarations of src/ as the build does (tsconfig.json's `stripInternal`) and
 * compiles a user's file against them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
// Inside the repository, so the declarations find node_modules; .tmp/ is ignored by git.
const dir = `${root}.tmp/declarations-test-${process.pid}`;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): string {
  try {
    execFileSync(process.execPath, [tsc, ...args], { cwd: root, encoding: 'utf8', stdio: 'pipe' });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout);
  }
}

it('new Posts(), new Paginator(), new APIPromise() and the others do not compile against the declarations', () => {
  mkdirSync(dir, { recursive: true });
  const config = {
    extends: `${root}tsconfig.json`,
    compilerOptions: { noEmit: false, declaration: true, emitDeclarationOnly: true, outDir: `${dir}/out`, rootDir: `${root}src` },
    include: [`${root}src`],
  };
  writeFileSync(`${dir}/tsconfig.json`, JSON.stringify(config));
  expect(run(['-p', `${dir}/tsconfig.json`])).toBe('');
  writeFileSync(
    `${dir}/user.ts`,
    `import { Accounts, Analytics, APIPromise, Media, Paginator, PostSched, Posts } from './out/index.js';
const client = new PostSched({ baseUrl: 'https://api.example', auth: 'token' });
export const posts: Posts = client.posts;
export const page: Paginator<unknown> = client.posts.list();
export const promise: APIPromise<unknown> = client.posts.get('post_1');
// @ts-expect-error private: use client.posts
new Posts();
// @ts-expect-error private: use client.accounts
new Accounts();
// @ts-expect-error private: use client.media
new Media();
// @ts-expect-error private: use client.analytics
new Analytics();
// @ts-expect-error private: the list methods return one
new Paginator();
// @ts-expect-error private: the API methods return one
new APIPromise<unknown>(() => {});
`,
  );
  const errors = run(['--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', `${dir}/user.ts`]);
  expect(errors).toBe('');
}, 120_000);

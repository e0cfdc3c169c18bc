#!/usr/bin/env node
// The runtime matrix on what we publish: build, `npm pack`, install the tarball into a fresh project made from
// test/runtimes/smoke/, then run its smoke.mjs under Node 20 (this node), Node 22, Node 24, Bun and Deno (all of
// which resolve the `node` export condition), and the default, Web Crypto entry in the edge: worker.mjs bundled as
// wrangler bundles for workerd and as Next.js bundles for Vercel's edge-runtime, and served by Deno and Bun with
// `--conditions=worker` (edge.mjs drives each against the fake service on 127.0.0.1; examples/webhooks-cloudflare.ts
// runs beside it in workerd); and the same worker bundled into one file by Rollup (`output.file`) and by webpack
// (`target: 'webworker'`), each run in workerd. Runtimes come from npm
// (scripts/install-runtimes.sh, cached in .tmp/runtimes).
// Node 20 also compiles check.ts/check.cts with tsc (node16 and bundler resolution); Deno also runs `deno check`.
// Prints one line per runtime and `N passed, M failed`; exits 1 if any runtime failed.
//
//   npm run test:runtimes                  build first
//   npm run test:runtimes -- --no-build    use the dist/ already built (CI builds once)
//   npm run test:runtimes -- --keep        keep the smoke project (its path is printed)
import { execFile as execFileCb } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build as esbuild } from 'esbuild';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { rollup } from 'rollup';
import webpack from 'webpack';

const execFile = promisify(execFileCb);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)}s`;

/** Runs a command; resolves { ok, out (stdout + stderr), stdout }, never rejects. Kills it after `timeoutMs`. */
async function run(cmd, argv, { cwd = root, timeoutMs = 120_000, env = {} } = {}) {
  try {
    const { stdout, stderr } = await execFile(cmd, argv, {
      cwd,
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', DENO_NO_UPDATE_CHECK: '1', ...env },
    });
    return { ok: true, out: `${stdout}${stderr}`, stdout };
  } catch (error) {
    const reason = error.killed ? `killed after ${timeoutMs / 1000}s (did it leave a socket or timer open?)\n` : '';
    const out = `${reason}${error.stdout ?? ''}${error.stderr ?? ''}${error.stdout === undefined ? String(error) : ''}`;
    return { ok: false, out: out.replace(/\x1b\[[0-9;]*m/g, '') }; // deno check colours its output even with NO_COLOR
  }
}

async function must(label, cmd, argv, options) {
  const t = Date.now();
  const result = await run(cmd, argv, options);
  if (!result.ok) {
    console.error(`test:runtimes: ${label} failed\n${result.out}`);
    process.exit(1);
  }
  console.log(`  ${label} (${seconds(t)})`);
  return result.stdout;
}

const version = (pkg) => JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version;

// 1. The tarball, exactly as `npm publish` would send it.
if (!args.has('--no-build')) await must('build', 'npm', ['run', 'build']);
mkdirSync(join(root, '.tmp'), { recursive: true }); // a fresh clone has no .tmp/ yet
const packed = JSON.parse(await must('npm pack', 'npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', '.tmp']));
const tarball = join(root, '.tmp', packed[0].filename);

// 2. The other runtimes (cached in .tmp/runtimes/).
const runtimes = Object.fromEntries(
  (await must('runtimes', 'bash', ['scripts/install-runtimes.sh'])).trim().split('\n').map((line) => line.split(' ')),
);

// 3. A fresh user project OUTSIDE the repository: inside it, Node would find the repo's node_modules for any
//    dependency the tarball forgot to declare, and Bun would follow the repo's tsconfig "paths" to src/.
const smoke = mkdtempSync(join(tmpdir(), 'postsched-sdk-smoke-'));
for (let dir = dirname(smoke); ; dir = dirname(dir)) {
  const leak = ['node_modules', 'package.json', 'tsconfig.json'].find((name) => existsSync(join(dir, name)));
  if (leak) {
    console.error(`test:runtimes: ${join(dir, leak)} would leak into the smoke project; set TMPDIR elsewhere`);
    process.exit(1);
  }
  if (dir === dirname(dir)) break;
}
cpSync(join(root, 'test/runtimes/smoke'), smoke, { recursive: true });
// A user's own test file, as their vitest runs it: fake timers, msw, the SDK's first call of the process.
const fakeTimersTest = 'first-call-fake-timers.test.ts';
cpSync(join(root, 'test/http', fakeTimersTest), join(smoke, fakeTimersTest));
const devTools = ['typescript', '@types/node', 'vitest', 'msw'];
await must(`npm install (tarball, ${devTools.map((name) => `${name} ${version(name)}`).join(', ')})`, 'npm', [
  'install', tarball, ...devTools.map((name) => `${name}@${version(name)}`),
  '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error',
], { cwd: smoke });

// 4. The edge app, bundled from the installed tarball as each runtime's bundler does: no `node` condition, so a
//    bundle that pulled in the Node entry (or any `node:` import) fails here or in the runtime.
cpSync(join(root, 'examples/webhooks-cloudflare.ts'), join(smoke, 'webhooks-cloudflare.ts')); // as a user copies it
const sdkEntries = 'dist/index.js,dist/schedule/index.js,dist/webhooks/index.js';
/** Which of the package's files are entry points (index, or the Node entry), in every bundler's report. */
const isEntry = (f) => /^dist\/((webhooks|schedule)\/)?(index|node)\./.test(f);
const edgeBundles = [
  // wrangler: esbuild, browser platform, conditions workerd > worker > browser; an ES module worker.
  { file: 'worker.workerd.js', conditions: ['workerd', 'worker', 'browser'], format: 'esm', entryPoints: ['worker.mjs'] },
  // examples/webhooks-cloudflare.ts, deployed beside it in the same workerd.
  {
    file: 'example.workerd.js',
    conditions: ['workerd', 'worker', 'browser'],
    format: 'esm',
    entryPoints: ['webhooks-cloudflare.ts'],
    holds: 'dist/webhooks/index.js',
  },
  // Next.js edge routes: conditions edge-light > worker > browser; edge-runtime evaluates a script with a fetch listener.
  {
    file: 'worker.edge.js',
    conditions: ['edge-light', 'worker', 'browser'],
    format: 'iife',
    stdin: {
      contents: "import worker from './worker.mjs'; addEventListener('fetch', (e) => e.respondWith(worker.fetch(e.request)));",
      resolveDir: smoke,
    },
  },
];
const bundledEntry = {};
for (const { file, holds = sdkEntries, ...options } of edgeBundles) {
  const t = Date.now();
  const result = await esbuild({
    ...options, absWorkingDir: smoke, bundle: true, platform: 'browser', outfile: join(smoke, file), metafile: true, logLevel: 'error',
  }).catch((error) => ({ error }));
  const sdkFiles = result.error ? [] : Object.keys(result.metafile.inputs).filter((f) => f.includes('@postsched/sdk/dist/'));
  const entries = sdkFiles.map((f) => f.slice(f.indexOf('dist/'))).filter(isEntry);
  if (result.error || entries.sort().join() !== holds) {
    console.error(`test:runtimes: bundling ${file} failed${result.error ? `\n${result.error.message}` : `: it holds ${entries.join(', ')}`}`);
    process.exit(1);
  }
  bundledEntry[file] = `${entries.join(' + ')} (bundled: ${options.conditions.join(', ')})`;
  console.log(`  bundle ${file} (${seconds(t)})`);
}

// The same worker as two other bundlers make it, each into ONE file (issue 22: a lazy `import()` in the default
// entry made webpack emit a second chunk it loads with importScripts from a path it cannot work out, and Rollup
// refuse `output.file`): Rollup's `output.file` (an ES module worker) and webpack's `target: 'webworker'` (a service
// worker script, sw.mjs), both run in workerd below.
const otherBundlers = {
  'worker.rollup.js': async (file) => {
    const bundle = await rollup({
      input: join(smoke, 'worker.mjs'),
      plugins: [nodeResolve({ exportConditions: ['workerd', 'worker', 'browser'], browser: true, preferBuiltins: false })],
      // Every warning about the SDK's own files fails the run; one about a dependency's inside alone (zod 4, external
      // to the SDK: a doc comment where Rollup looks for `@__PURE__`, an import cycle between its own core files) is
      // the dependency's as published, and its code runs the same.
      onwarn: (warning) => {
        const ids = warning.ids ?? (warning.id === undefined ? [] : [warning.id]);
        if (ids.length > 0 && ids.every((id) => id.includes('/node_modules/zod/'))) return;
        throw new Error(warning.message);
      },
    });
    await bundle.write({ file: join(smoke, file), format: 'es' });
    await bundle.close();
    return bundle.watchFiles; // every module it read
  },
  'worker.webpack.sw.js': (file) =>
    new Promise((resolve, reject) => {
      const config = { mode: 'production', target: 'webworker', context: smoke, entry: './sw.mjs', devtool: false, output: { path: smoke, filename: file } };
      webpack(config, (error, stats) => {
        if (error || stats.hasErrors()) return reject(error ?? new Error(stats.toString('errors-only')));
        const { assets, modules } = stats.toJson({ all: false, assets: true, modules: true, nestedModules: true, orphanModules: true });
        if (assets.length !== 1) return reject(new Error(`webpack emitted ${assets.length} files: ${assets.map((a) => a.name).join(', ')}`));
        resolve(modules.flatMap((m) => [m, ...(m.modules ?? [])]).map((m) => m.nameForCondition ?? m.name ?? ''));
      });
    }),
};
for (const [file, bundle] of Object.entries(otherBundlers)) {
  const t = Date.now();
  const inputs = await bundle(file).catch((error) => ({ error }));
  const entries = inputs.error ? [] : [...new Set(inputs.filter((f) => f.includes('@postsched/sdk/dist/')).map((f) => f.slice(f.indexOf('dist/'))))];
  const held = entries.filter(isEntry).sort().join();
  if (inputs.error || held !== sdkEntries) {
    console.error(`test:runtimes: bundling ${file} failed${inputs.error ? `\n${inputs.error.message}` : `: it holds ${held}`}`);
    process.exit(1);
  }
  bundledEntry[file] = `${held.replaceAll(',', ' + ')} (one file: ${file.includes('rollup') ? "Rollup output.file" : "webpack target webworker"})`;
  console.log(`  bundle ${file} (${seconds(t)})`);
}

// 5. The matrix. tsc runs while the runtimes do (its result does not depend on the engine running it).
const tsc = join(smoke, 'node_modules/typescript/bin/tsc');
const types = Promise.all(
  ['node16', 'bundler'].map(async (mode) => {
    const t = Date.now();
    const result = await run(process.execPath, [tsc, '-p', `tsconfig.${mode}.json`], { cwd: smoke });
    return { mode, took: seconds(t), ...result };
  }),
);
const vitest = ['node_modules/vitest/vitest.mjs', 'run', fakeTimersTest];
const matrix = [
  { name: 'node20', cmd: process.execPath, argv: ['smoke.mjs'], types: true },
  // The built SDK (ky and oauth4webapi bundled in it) under a fake clock, in each Node the SDK supports.
  { name: 'node20-vitest', cmd: process.execPath, argv: vitest, vitest: true },
  { name: 'node22-vitest', cmd: runtimes.node22, argv: vitest, vitest: true },
  { name: 'node24-vitest', cmd: runtimes.node24, argv: vitest, vitest: true },
  { name: 'node22', cmd: runtimes.node22, argv: ['smoke.mjs'] },
  { name: 'node24', cmd: runtimes.node24, argv: ['smoke.mjs'] },
  { name: 'bun', cmd: runtimes.bun, argv: ['smoke.mjs'] },
  { name: 'deno', cmd: runtimes.deno, argv: ['run', '-A', '--cached-only', 'smoke.mjs'], denoCheck: true },
  // The default (Web Crypto) entry: in workerd and edge-runtime as bundled above, in Bun and Deno as resolved.
  { name: 'bun-web', cmd: process.execPath, argv: ['edge.mjs', 'bun', runtimes.bun], edge: true },
  { name: 'deno-web', cmd: process.execPath, argv: ['edge.mjs', 'deno', runtimes.deno], edge: true },
  { name: 'workerd', cmd: process.execPath, argv: ['edge.mjs', 'workerd', runtimes.workerd], edge: 'worker.workerd.js' },
  { name: 'edge-runtime', cmd: process.execPath, argv: ['edge.mjs', 'edge-runtime', runtimes['edge-runtime']], edge: 'worker.edge.js' },
  { name: 'workerd-rollup', cmd: process.execPath, argv: ['edge.mjs', 'workerd', runtimes.workerd, 'worker.rollup.js'], edge: 'worker.rollup.js' },
  { name: 'workerd-webpack', cmd: process.execPath, argv: ['edge.mjs', 'workerd', runtimes.workerd, 'worker.webpack.sw.js'], edge: 'worker.webpack.sw.js' },
];

console.log('');
let passed = 0;
for (const entry of matrix) {
  const t = Date.now();
  const result = await run(entry.cmd, entry.argv, { cwd: smoke, timeoutMs: 60_000 });
  const line = result.out.split('\n').find((l) => l.startsWith('SMOKE_RESULT '));
  const problems = [];
  let summary = '';
  if (entry.vitest) {
    // vitest's own summary, e.g. "Tests  3 passed (3)"; it exits non-zero on any failure.
    const tests = result.out.replace(/\x1b\[[0-9;]*m/g, '').match(/Tests\s+(.+)/)?.[1]?.trim();
    if (result.ok && tests !== undefined && !/failed|skipped/.test(tests)) summary = `${fakeTimersTest} under fake timers: ${tests}`;
    else problems.push(result.out.trim().split('\n').slice(-25).join('\n'));
  } else if (!result.ok || line === undefined) {
    problems.push(result.out.trim().split('\n').slice(-15).join('\n'));
  } else {
    const r = JSON.parse(line.slice('SMOKE_RESULT '.length));
    const loaded = entry.edge ? `default entry ${r.entry ?? bundledEntry[entry.edge]}` : `esm ${r.esm}, cjs ${r.cjs}`;
    summary = `${r.runtime.padEnd(18)} ${loaded}, fake on ${r.server}, ${r.checks.length} checks`;
  }
  if (entry.denoCheck) {
    const check = await run(entry.cmd, ['check', '--cached-only', 'check.ts'], { cwd: smoke });
    if (check.ok) summary += ', deno check';
    else problems.push(`deno check check.ts:\n${check.out.trim()}`);
  }
  if (entry.types) {
    for (const { mode, took, ok, out } of await types) {
      if (ok) summary += `, tsc ${mode} (${took})`;
      else problems.push(`tsc -p tsconfig.${mode}.json:\n${out.trim()}`);
    }
  }
  const ok = problems.length === 0;
  if (ok) passed += 1;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${entry.name.padEnd(15)} ${seconds(t).padStart(6)}  ${summary}`);
  for (const problem of problems) console.log(problem.replace(/^/gm, '       | '));
}

console.log(`\ntest:runtimes: ${seconds(started)} in all; smoke project ${args.has('--keep') || passed < matrix.length ? `kept at ${smoke}` : 'removed'}`);
if (!args.has('--keep') && passed === matrix.length) rmSync(smoke, { recursive: true, force: true });
console.log(`${passed} passed, ${matrix.length - passed} failed`);
process.exit(passed === matrix.length ? 0 : 1);

#!/usr/bin/env node
// What we publish: the tarball holds dist/, the guides the README links (docs/*.md), README, CHANGELOG, LICENSE (and
// package.json) and nothing else;
// publint is clean; arethetypeswrong is green in every resolution mode. Run after `npm run build`.
import { execFileSync } from 'node:child_process';

const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

const [pack] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts']));
const allowed = new Set(['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']);
const unexpected = pack.files.map((f) => f.path).filter((p) => !p.startsWith('dist/') && !/^docs\/[a-z-]+\.md$/.test(p) && !allowed.has(p));
const missing = [...allowed, 'docs/tokens.md'].filter((p) => !pack.files.some((f) => f.path === p));
if (unexpected.length > 0 || missing.length > 0) {
  console.error(`npm pack: unexpected ${JSON.stringify(unexpected)}, missing ${JSON.stringify(missing)}`);
  process.exit(1);
}
console.log(`npm pack: ${pack.files.length} files, ${(pack.size / 1024).toFixed(1)} KB packed: dist/, docs/*.md, README, CHANGELOG, LICENSE`);

execFileSync('npx', ['publint', '--strict'], { stdio: 'inherit' });
execFileSync('npx', ['attw', '--pack', '.', '--format', 'table-flipped'], { stdio: 'inherit' });

// Export conditions, resolved by Node itself (a self-reference from this folder): a runtime or bundler asking for
// `workerd`, `edge-light`, `worker` or `browser` gets the Web Crypto build even when it also sets `node`, as Node,
// Bun and Deno always do (and wrangler with a Node platform); `node` alone gets the node:crypto build.
const probe = `
  import { createRequire } from 'node:module';
  const require = createRequire(process.cwd() + '/');
  const short = (path) => path.slice(path.indexOf('/dist/') + 1);
  console.log(['@postsched/sdk', '@postsched/sdk/webhooks']
    .flatMap((s) => [short(import.meta.resolve(s)), short(require.resolve(s))]).join(' '));`;
const web = 'dist/index.js dist/index.cjs dist/webhooks/index.js dist/webhooks/index.cjs';
const expected = [
  [undefined, 'dist/index.node.js dist/index.node.cjs dist/webhooks/node.js dist/webhooks/node.cjs'],
  ...['workerd', 'edge-light', 'worker', 'browser'].map((condition) => [condition, web]),
];
for (const [condition, files] of expected) {
  const flags = condition === undefined ? [] : [`--conditions=${condition}`];
  const got = run(process.execPath, [...flags, '--input-type=module', '-e', probe]).trim();
  if (got !== files) {
    console.error(`exports: with ${condition ?? 'node'} resolved ${got}, expected ${files}`);
    process.exit(1);
  }
}
console.log(`exports: node → node:crypto build; ${expected.slice(1).map(([c]) => c).join(', ')} (with node set too) → Web Crypto build`);

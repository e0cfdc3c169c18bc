#!/usr/bin/env node
// What we publish: the tarball holds dist/, README, CHANGELOG, LICENSE (and package.json) and nothing else;
// publint is clean; arethetypeswrong is green in every resolution mode. Run after `npm run build`.
import { execFileSync } from 'node:child_process';

const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

const [pack] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts']));
const allowed = new Set(['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']);
const unexpected = pack.files.map((f) => f.path).filter((p) => !p.startsWith('dist/') && !allowed.has(p));
const missing = [...allowed].filter((p) => !pack.files.some((f) => f.path === p));
if (unexpected.length > 0 || missing.length > 0) {
  console.error(`npm pack: unexpected ${JSON.stringify(unexpected)}, missing ${JSON.stringify(missing)}`);
  process.exit(1);
}
console.log(`npm pack: ${pack.files.length} files, ${(pack.size / 1024).toFixed(1)} KB packed: dist/, README, CHANGELOG, LICENSE`);

execFileSync('npx', ['publint', '--strict'], { stdio: 'inherit' });
execFileSync('npx', ['attw', '--pack', '.', '--format', 'table-flipped'], { stdio: 'inherit' });

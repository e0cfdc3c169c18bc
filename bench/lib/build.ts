/** Builds dist/ when it is missing or older than any file in src/ (the build takes most of a minute). */
import { execSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export function ensureBuilt(): void {
  let built = 0;
  try {
    built = statSync(join(root, 'dist/index.js')).mtimeMs;
  } catch {
    // not built yet
  }
  const sources = Math.max(newestMtime(join(root, 'src')), statSync(join(root, 'tsup.config.ts')).mtimeMs);
  if (built > sources) return;
  console.log(built === 0 ? 'dist/ is missing: npm run build' : 'src/ changed since the last build: npm run build');
  execSync('npm run build', { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}

import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

describe('the type tests', () => {
  it('are files `npm run typecheck` compiles (tsc -p tsconfig.json), not only files vitest skips', () => {
    const typeTests = readdirSync(new URL('.', import.meta.url)).filter((name) => name.endsWith('.test-d.ts'));
    expect(typeTests.length).toBeGreaterThan(0);
    const listed = execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--listFilesOnly'], { cwd: root, encoding: 'utf8' });
    for (const name of typeTests) expect(listed).toContain(`/test/types/${name}`);
  });
});

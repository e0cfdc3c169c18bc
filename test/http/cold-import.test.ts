import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const entry = fileURLToPath(new URL('../../src/index.node.ts', import.meta.url));

describe('import cost', () => {
  it("importing the SDK does not load Node's fetch implementation (ky is loaded on the first request)", () => {
    // A fresh process, as an app's cold start: anything that touches Request/Headers/Response at module load
    // makes Node load and compile undici, which the cold-import benchmark pays on every start.
    const dir = mkdtempSync(join(tmpdir(), 'postsched-import-'));
    try {
      const script = join(dir, 'probe.mts'); // .mts: an ES module wherever it lives (top-level await)
      writeFileSync(
        script,
        `await import(${JSON.stringify(entry)});\n` +
          `console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))));\n`,
      );
      const result = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8' });
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The kernel's rules (scripts/check-kernel.mjs, also `npm run lint`): input is refused only through
 * src/core/invalid-option.ts, the kernel imports only itself, and no import cycle joins files or folders of src/.
 * The script reads the sources, so this runs in the suite too; the second test shows it catches each breach.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');

async function check(src?: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [join(ROOT, 'scripts/check-kernel.mjs'), ...(src === undefined ? [] : [src])], { cwd: ROOT });
    return { ok: true, output: stdout };
  } catch (error) {
    return { ok: false, output: String((error as { stderr?: string }).stderr) };
  }
}

describe('kernel rules', () => {
  it('hold over src/', async () => {
    const { ok, output } = await check();
    expect(output).toContain('no import cycle');
    expect(ok).toBe(true);
  });

  it('fail on a ValidationError made outside src/core, a kernel import of another folder, and import cycles', async () => {
    const copy = await mkdtemp(join(tmpdir(), 'kernel-rules-'));
    try {
      await cp(join(ROOT, 'src'), join(copy, 'src'), { recursive: true });
      await writeFile(join(copy, 'src/http/refuse.ts'), "import { ValidationError } from '../core/errors.js';\nexport const no = () => new ValidationError('no');\n");
      await writeFile(join(copy, 'src/core/upward.ts'), "export { Pipeline } from '../http/request.js';\n");
      await writeFile(join(copy, 'src/oauth/a.ts'), "import type { B } from './b.js';\nexport type A = B[];\n");
      await writeFile(join(copy, 'src/oauth/b.ts'), "import type { A } from './a.js';\nimport type { Hooks } from '../http/hooks.js';\nexport type B = A | Hooks;\n");
      await writeFile(join(copy, 'src/http/back.ts'), "export type { B } from '../oauth/b.js';\nexport type { Posts } from '../resources/posts.js';\n");
      const { ok, output } = await check(join(copy, 'src'));
      expect(ok).toBe(false);
      expect(output).toContain('src/http/refuse.ts:2');
      expect(output).toContain('src/core/upward.ts: the kernel imports src/http/request.ts');
      expect(output).toContain('import cycle between files: src/oauth/a.ts → src/oauth/b.ts, src/oauth/b.ts → src/oauth/a.ts');
      expect(output).toMatch(/import cycle between folders: .*http\/ → oauth\/.*oauth\/ → http\//);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });
});

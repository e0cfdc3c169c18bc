/**
 * Every TypeScript block of README.md and docs/*.md typechecks under `strict`, against the package's types as users
 * import them (`@postsched/sdk`, `/webhooks`, `/redis`, `/postgres`, `/testing`, `/schedule`: their Node entries,
 * from the sources), in one tsc program for all blocks. A block that is deliberately partial (a fragment, a type
 * declaration to adapt, a line of another block) says so on its first line, `// partial: <why>`, and is skipped;
 * the test fails for a block that neither typechecks nor says so.
 *
 * Each block is a module of its own. Besides its imports it may use only the names of CONTEXT: what the prose
 * around the blocks says is the reader's own (`app` is Express, `currentUserId(req)`, `notifyUser`, `queue`, `db`)
 * or was made by an earlier block (`oauth`, `baseUrl`, `pool`, `users`, `client`, `userId`, `store`). A name made in a block
 * shadows the context's.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => join('docs', f))];

/** The names a block may use without making them (see the file's comment). */
const CONTEXT = `
import type { Express, Request } from 'express';
import type { CallbackChecks, OAuthClient, PostSched, TokenStore, UserClients } from '@postsched/sdk';
import type { Pool } from 'pg';

declare global {
  /** "here \`app\` is Express" */
  const app: Express;
  /** "\`currentUserId(req)\` your app's signed-in user" */
  function currentUserId(req: Request): string;
  /** "\`notifyUser\` however you reach them" */
  function notifyUser(userId: string): void;
  /** "\`queue\` and \`db\` stand for your job queue and database" */
  const queue: { add(name: string, data: unknown): Promise<unknown> };
  const db: { posts: { setStatus(id: string, status: string): Promise<void> } };
  /** Made by the "Connect a user" block. */
  const oauth: OAuthClient;
  const baseUrl: string;
  const pool: Pool;
  const users: UserClients;
  const store: (userId: string) => TokenStore;
  /** A user's client and id, as in "Requests". */
  const client: PostSched;
  const userId: string;
  /** "Local time": what the user picked, in their zone, and the app's drafts. */
  const account_ids: string[];
  const pickedDate: string;
  const pickedTime: string;
  const user: { timeZone: string };
  function nextDraft(): string;
  const campaign: string;
  namespace Express {
    /** "\`req.session\` your server-side session", typed as express-session types it (every field optional). */
    interface Request {
      session: { oauth?: CallbackChecks };
    }
  }
}
export {};
`;

interface Block {
  /** README.md:42 (the line of its opening fence). */
  where: string;
  code: string;
  partial: boolean;
}

/** The ```ts / ```typescript blocks of `page`, with the line each starts at. */
function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(?:ts|typescript)\s*$/.exec(lines[i] as string);
    if (fence === null) continue;
    const indent = (fence[1] as string).length;
    const start = i;
    const body: string[] = [];
    while (++i < lines.length && !/^\s*```\s*$/.test(lines[i] as string)) body.push((lines[i] as string).slice(indent));
    blocks.push({ where: `${page}:${start + 1}`, code: body.join('\n'), partial: /^\/\/ partial: \S/.test(body[0] ?? '') });
  }
  return blocks;
}

const blocks = PAGES.flatMap(blocksOf);
const dir = (() => {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  return mkdtempSync(join(ROOT, '.tmp', 'doc-blocks-'));
})();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The one program: every block not marked partial, plus CONTEXT. Diagnostics by block, as `line:col message`. */
function typecheck(checked: Block[]): Map<Block, string[]> {
  const files = new Map<string, Block>();
  writeFileSync(join(dir, 'context.ts'), CONTEXT);
  checked.forEach((block, n) => {
    const file = join(dir, `block-${n}.ts`);
    // `export {}`: a module even without imports, so blocks do not share top-level names.
    writeFileSync(file, `${block.code}\nexport {};\n`);
    files.set(file, block);
  });
  const src = (path: string) => [`src/${path}`];
  const program = ts.createProgram([join(dir, 'context.ts'), ...files.keys()], {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: ['node'],
    skipLibCheck: true,
    noEmit: true,
    baseUrl: ROOT,
    // The Node entries, as a user's Node project resolves them (package.json "exports", condition `node`).
    paths: {
      '@postsched/sdk': src('index.node.ts'),
      '@postsched/sdk/webhooks': src('webhooks/node.ts'),
      '@postsched/sdk/testing': src('testing/index.ts'),
      '@postsched/sdk/redis': src('redis/index.ts'),
      '@postsched/sdk/postgres': src('postgres/index.ts'),
      '@postsched/sdk/schedule': src('schedule/index.ts'),
      '@postsched/sdk/tools': src('tools/index.ts'),
      '@postsched/sdk/otel': src('otel/index.ts'),
    },
  });
  const found = new Map<Block, string[]>(checked.map((block) => [block, []]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName;
    const block = file === undefined ? undefined : files.get(file);
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (block === undefined) {
      // Not a block's: the context or the sources under these options; either breaks every block.
      if (file === undefined || file.startsWith(dir)) found.set({ where: relative(ROOT, file ?? 'options'), code: '', partial: false }, [text]);
      continue;
    }
    const { line, character } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    found.get(block)!.push(`${line + 1}:${character + 1} ${text}`);
  }
  return found;
}

/** Two blocks of the test's own, in the same program: proof that an error in a block is reported, and only there. */
const WRONG: Block = { where: 'a wrong call', code: 'await users.client(userId).posts.create({ text: 42 });', partial: false };
const RIGHT: Block = { where: 'a right call', code: "import { UserClients } from '@postsched/sdk';\nconst u: UserClients = users;\nawait u.client(userId).posts.get('post_1');", partial: false };

describe('the TypeScript blocks of README.md and docs/*.md', () => {
  const checked = blocks.filter((b) => !b.partial);
  let found: Map<Block, string[]>;

  it('are found on every page that has them, README.md the most', () => {
    expect(blocks.filter((b) => b.where.startsWith('README.md:')).length).toBeGreaterThanOrEqual(8);
    expect(blocks.length).toBeGreaterThanOrEqual(20);
    expect(checked.length).toBeGreaterThan(blocks.length / 2);
  });

  it('typecheck under strict against the package, one program for all; only a block marked `// partial: …` is skipped', () => {
    found = typecheck([...checked, WRONG, RIGHT]);
    // The program reports a block's errors, and only its own.
    expect(found.get(WRONG)?.join('\n')).toMatch(/not assignable/);
    expect(found.get(RIGHT)).toEqual([]);
    found.delete(WRONG);
    const failing = [...found].filter(([, errors]) => errors.length > 0).map(([block, errors]) => `${block.where}\n  ${errors.join('\n  ')}`);
    expect(failing).toEqual([]);
  }, 120_000);
});

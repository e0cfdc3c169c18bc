/**
 * The README a newcomer reads: its Usage snippet runs as shown against `postsched mock` (in its own process, like
 * the examples); it stays short (scripts/readme-stats.mjs) with a table of contents and Usage near the top; every
 * command it shows names something that exists: an npm script, an example file, a `postsched` command and its
 * options; its links to docs/ and CONTRIBUTING.md reach a file and a heading. What each command does is tested where
 * it lives (the demo, the examples and the CLI run as child processes; `npm test` itself is this suite, and CI runs
 * `npm ci`, the build and the checks).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readmeStats } from '../scripts/readme-stats.mjs';
import { start, startMock, stopAll } from './support/processes.js';
import { startRedisServer } from './redis/redis-server.js';
import { loginCommand } from '../src/cli/login.js';
import { mockCommand } from '../src/cli/mock.js';
import { rekeyCommand } from '../src/cli/rekey.js';
import { triggerCommand } from '../src/cli/trigger.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
const COMMANDS = new Map([mockCommand, triggerCommand, loginCommand, rekeyCommand].map((c) => [c.name, c]));

/** The pages the README links for what it does not say itself: the guides under docs/ and CONTRIBUTING.md. */
const PAGES = ['CONTRIBUTING.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

/** The shell lines of a page: its sh code blocks, and the inline `npm …` / `npx …` code spans. */
const shellLinesOf = (text: string) =>
  [
    ...(text.match(/```sh\n[\s\S]*?```/g) ?? []).flatMap((block) => block.split('\n').slice(1, -1)),
    ...[...text.matchAll(/`((?:npm|npx) [^`]+)`/g)].map((m) => m[1] as string),
  ]
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '');
const shellLines = shellLinesOf(README);
/** Those of the README and of the pages it links: a command moved to a guide is checked there. */
const allShellLines = [README, ...PAGES.map((page) => readFileSync(join(ROOT, page), 'utf8'))].flatMap(shellLinesOf);

/** The README's sections: `## Title` → its text up to the next `## `. */
const sections = new Map(
  README.split(/^(?=## )/m).slice(1).map((part) => [part.slice(3, part.indexOf('\n')).trim(), part] as const),
);

/** The GitHub anchor of a heading: lower case, punctuation out, spaces to hyphens. */
const anchor = (heading: string) => heading.toLowerCase().replace(/[^\p{L}\p{N}\s-]/gu, '').replace(/\s/g, '-');

describe('README.md for a newcomer', () => {
  it('is short: at most 3,500 prose words, at least 30% of its bytes in code blocks', () => {
    const stats = readmeStats(README);
    expect(stats.proseWords).toBeLessThanOrEqual(3500);
    expect(stats.blockShare).toBeGreaterThanOrEqual(0.3);
  });

  it('opens with a table of contents linking every section, and Usage within its first 60 lines', () => {
    const contents = /^\*\*Contents:\*\*(.*(?:\n(?!\n).*)*)/m.exec(README)?.[1] ?? '';
    const linked = [...contents.matchAll(/\]\(#([\w-]+)\)/g)].map((m) => m[1]);
    expect(linked).toEqual([...sections.keys()].filter((title) => title !== 'License').map(anchor));
    expect(README.split('\n').findIndex((line) => line === '## Usage')).toBeLessThan(60);
    expect(README.indexOf('**Contents:**')).toBeLessThan(README.indexOf('## Install'));
  });

  it('links docs/ pages and CONTRIBUTING.md that exist, at headings that exist', () => {
    const files = ['README.md', ...PAGES];
    const broken: string[] = [];
    let count = 0;
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const [, target, hash] of text.matchAll(/\]\(((?:\.\.\/)?(?:docs\/)?[\w.-]+\.md|\.\.\/[\w./-]+|[\w-]+\/[\w./-]+)?(?:#([\w-]+))?\)/g)) {
        if (target === undefined && hash === undefined) continue;
        count++;
        const path = target === undefined ? file : join(file, '..', target);
        if (!existsSync(join(ROOT, path))) {
          broken.push(`${file}: ${target}`);
          continue;
        }
        if (hash === undefined || !path.endsWith('.md')) continue;
        const headings = [...readFileSync(join(ROOT, path), 'utf8').matchAll(/^#+ (.*)$/gm)].map((m) => anchor(m[1] as string));
        if (!headings.includes(hash)) broken.push(`${file}: ${target ?? ''}#${hash}`);
      }
    }
    expect(count).toBeGreaterThan(30);
    expect(broken).toEqual([]);
  });

  it('Install says the snippets are ESM, gives the package.json line, and installs the tsx that `npx tsx` runs', () => {
    const install = sections.get('Install') ?? '';
    expect(install).toContain('ESM');
    expect(install).toMatch(/```json\n"type": "module"\n```/);
    expect(README).toMatch(/npx tsx/);
    expect(shellLinesOf(install).some((line) => /^npm install -D .*\btsx\b/.test(line))).toBe(true);
  });

  it('Connect a user shows the encryption key line and the command that makes a key (a store refuses to start without one)', () => {
    const connect = sections.get('Connect a user') ?? '';
    expect(connect).toContain('encryptionKey: process.env.TOKEN_ENCRYPTION_KEY');
    expect(connect).toContain('openssl rand -base64 32');
  });

  it('Usage: its snippet runs as shown against postsched mock, with the variables the mock prints', async () => {
    const snippet = /^```ts\n([\s\S]*?)^```/m.exec(sections.get('Usage') ?? '')?.[1];
    expect(snippet).toBeDefined();
    expect(snippet?.split('\n').length).toBeLessThanOrEqual(14);
    for (const part of ['posts.create(', 'for await (', 'instanceof NotFoundError', 'process.env.POSTSCHED_ACCESS_TOKEN']) expect(snippet).toContain(part);
    await mkdir(join(ROOT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(join(ROOT, '.tmp', 'readme-usage-'));
    const { mock, env } = await startMock();
    try {
      await writeFile(join(dir, 'usage.ts'), snippet as string);
      const run = start(join(dir, 'usage.ts'), [], { POSTSCHED_BASE_URL: env['POSTSCHED_BASE_URL'], POSTSCHED_ACCESS_TOKEN: env['POSTSCHED_ACCESS_TOKEN'], POSTSCHED_ACCOUNT_ID: env['POSTSCHED_ACCOUNT_ID'] });
      expect(await run.exited, run.output()).toBe(0);
      const [, postId] = /(post_\S+) is scheduled/.exec(run.stdout()) ?? [];
      expect(postId, run.output()).toBeDefined();
      expect(run.stdout()).toContain(`${postId} `); // listed by the for await loop
      expect(run.stdout()).toMatch(/^no post_none \(request req_\S+\); post_\S+ is scheduled$/m);
    } finally {
      await stopAll(mock);
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('README.md, "Rate limits"', () => {
  it('its Redis snippet runs and the process exits: the limiter closed, the Redis client it was given quit', async () => {
    const snippet = /^```ts\n([\s\S]*?)^```/m.exec(sections.get('Rate limits') ?? '')?.[1];
    expect(snippet).toContain('new RedisRateLimiter(');
    // What "as in Connect a user" gives it, with the memory store.
    const prelude = [
      "import { MemoryTokenStore, OAuthClient } from '@postsched/sdk';",
      "const baseUrl = 'http://127.0.0.1:4010';",
      "const oauth = new OAuthClient({ baseUrl, clientId: 'c', clientSecret: 's', redirectUri: 'http://127.0.0.1:3000/callback' });",
      'const store = () => new MemoryTokenStore();',
    ].join('\n');
    await mkdir(join(ROOT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(join(ROOT, '.tmp', 'readme-rate-limits-'));
    const redis = await startRedisServer();
    await writeFile(join(dir, 'rate-limits.ts'), `${prelude}\n${snippet as string}`);
    const run = start(join(dir, 'rate-limits.ts'), [], { REDIS_URL: redis.url });
    // Also when the test times out (a snippet that never exits): the process, the server and the file go.
    onTestFinished(async () => {
      await stopAll(run);
      await redis.stop();
      await rm(dir, { recursive: true, force: true });
    });
    expect(await run.exited, run.output()).toBe(0); // without `redis.quit()` it never exits (the test times out)
    expect(run.stdout()).toContain('queued: 0');
  }, 60_000);
});

describe('the commands in README.md', () => {
  it('name npm scripts that exist', () => {
    const scripts = allShellLines.flatMap((line) => [...line.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1] as string));
    expect(scripts.length).toBeGreaterThan(5);
    // The two set-up commands of a clone stay in the README itself: the demo and the tests.
    expect(shellLines).toContain('npm ci && npm run demo');
    expect(scripts.filter((name) => PACKAGE.scripts[name] === undefined)).toEqual([]);
    expect(shellLines.filter((line) => /\bnpm (?:test|ci)\b/.test(line)).length).toBeGreaterThan(0);
    expect(PACKAGE.scripts.test).toBe('vitest run');
  });

  it('name example files that exist', () => {
    const files = [README, ...PAGES.map((page) => readFileSync(join(ROOT, page), 'utf8'))].flatMap((text) => [...text.matchAll(/\b(examples\/[\w.-]+\.ts)\b/g)].map((m) => m[1] as string));
    expect(files.length).toBeGreaterThan(5);
    expect([...new Set(files)].filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
  });

  it('the examples point at README sections that exist (README.md#anchor, or README, "Section")', () => {
    const examples = readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.ts'));
    const named = examples.flatMap((file) => {
      const text = readFileSync(join(ROOT, 'examples', file), 'utf8');
      return [
        ...[...text.matchAll(/README\.md#([\w-]+)/g)].map((m) => ({ file, anchor: m[1] as string })),
        ...[...text.matchAll(/README(?:'s)?,? "([^"]+)"/g)].map((m) => ({ file, anchor: anchor(m[1] as string) })),
      ];
    });
    expect(named.length).toBeGreaterThan(0);
    const anchors = [...sections.keys()].map(anchor);
    expect(named.filter(({ anchor: a }) => !anchors.includes(a))).toEqual([]);
  });

  it('name postsched commands and options that exist, and postsched is the package bin', () => {
    expect(PACKAGE.bin).toEqual({ postsched: './dist/cli/index.js' });
    // `npx postsched mock` (installed), `npm run postsched -- login` (a clone), `node dist/cli/index.js login` (built).
    const invocation = /\b(?:postsched(?: --)?|cli\/index\.js) (mock|login|trigger|rekey)\b(.*)$/;
    const uses = allShellLines.filter((line) => invocation.test(line));
    expect(uses.length).toBeGreaterThanOrEqual(8);
    expect(shellLines.filter((line) => invocation.test(line)).length).toBeGreaterThanOrEqual(1);
    for (const line of uses) {
      const [, name, rest] = invocation.exec(line) as RegExpExecArray;
      const command = COMMANDS.get(name as string);
      expect(command, line).toBeDefined();
      for (const [option] of (rest as string).matchAll(/--[\w-]+/g)) expect(command?.help, `${line}: ${option}`).toContain(option);
    }
  });
});

describe('the RedisTokenStore keys the docs show (README, TSDoc, examples)', () => {
  it('put the user id in braces, so no user id reaches another user\'s `:lock` key and Cluster gets its hash tag', () => {
    const files = ['README.md', ...PAGES, ...['src', 'examples'].flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f)))];
    const keys = files.flatMap((file) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(/\bkey: `([^`]*\$\{[^`]*)`/g)].map((m) => `${file}: ${m[1]}`));
    expect(keys.length).toBeGreaterThanOrEqual(5);
    expect(keys.filter((key) => /(?<!\{)\$\{/.test(key))).toEqual([]);
  });
});

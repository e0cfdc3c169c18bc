/**
 * Every command the README shows names something that exists: an npm script, an example file, a `postsched`
 * command and its options. What each one does is tested where it lives (the demo, the examples and the CLI run
 * as child processes; `npm test` itself is this suite, and CI runs `npm ci`, the build and the checks).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loginCommand } from '../src/cli/login.js';
import { mockCommand } from '../src/cli/mock.js';
import { rekeyCommand } from '../src/cli/rekey.js';
import { triggerCommand } from '../src/cli/trigger.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
const COMMANDS = new Map([mockCommand, triggerCommand, loginCommand, rekeyCommand].map((c) => [c.name, c]));

/** The shell lines of the README: its sh code blocks, and the inline `npm …` / `npx …` code spans. */
const shellLines = [
  ...(README.match(/```sh\n[\s\S]*?```/g) ?? []).flatMap((block) => block.split('\n').slice(1, -1)),
  ...[...README.matchAll(/`((?:npm|npx) [^`]+)`/g)].map((m) => m[1] as string),
].map((line) => line.replace(/\s+#.*$/, '').trim()).filter((line) => line !== '');

describe('the commands in README.md', () => {
  it('name npm scripts that exist', () => {
    const scripts = shellLines.flatMap((line) => [...line.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1] as string));
    expect(scripts.length).toBeGreaterThan(5);
    expect(scripts.filter((name) => PACKAGE.scripts[name] === undefined)).toEqual([]);
    expect(shellLines.filter((line) => /\bnpm (?:test|ci)\b/.test(line)).length).toBeGreaterThan(0);
    expect(PACKAGE.scripts.test).toBe('vitest run');
  });

  it('name example files that exist', () => {
    const files = [...README.matchAll(/\b(examples\/[\w.-]+\.ts)\b/g)].map((m) => m[1] as string);
    expect(files.length).toBeGreaterThan(5);
    expect([...new Set(files)].filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
  });

  it('name postsched commands and options that exist, and postsched is the package bin', () => {
    expect(PACKAGE.bin).toEqual({ postsched: './dist/cli/index.js' });
    const uses = shellLines.filter((line) => /\bpostsched (mock|login|trigger|rekey)\b/.test(line));
    expect(uses.length).toBeGreaterThanOrEqual(3);
    for (const line of uses) {
      const [, name, rest] = /\bpostsched (\w+)(.*)$/.exec(line) as RegExpExecArray;
      const command = COMMANDS.get(name as string);
      expect(command, line).toBeDefined();
      for (const [option] of (rest as string).matchAll(/--[\w-]+/g)) expect(command?.help, `${line}: ${option}`).toContain(option);
    }
  });
});

describe('the RedisTokenStore keys the docs show (README, TSDoc, examples)', () => {
  it('put the user id in braces, so no user id reaches another user\'s `:lock` key and Cluster gets its hash tag', () => {
    const files = ['README.md', ...['src', 'examples'].flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f)))];
    const keys = files.flatMap((file) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(/\bkey: `([^`]*\$\{[^`]*)`/g)].map((m) => `${file}: ${m[1]}`));
    expect(keys.length).toBeGreaterThanOrEqual(5);
    expect(keys.filter((key) => /(?<!\{)\$\{/.test(key))).toEqual([]);
  });
});

/**
 * The test set-up provisions redis-server and chromium itself (test/support/test-tools.ts). The decision is
 * unit-tested branch by branch; then vitest is run as a child process on a PATH without either program, as on
 * a fresh machine (apt-get in dry-run mode: this machine has both, and the tests must not install anything).
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { debianPostgresDirs, findOnPath, missingMessage, planProvisioning, type Probe, probe, TEST_TOOLS, type TestTool, withSystemDirs } from './test-tools.js';

const [REDIS, CHROMIUM] = TEST_TOOLS as [TestTool, TestTool];
const probes = (redis: Probe, chromium: Probe) => new Map([[REDIS, redis], [CHROMIUM, chromium]]);
const found = (path: string): Probe => ({ path });
const missing: Probe = { missing: true };

describe('planProvisioning (what the test set-up decides)', () => {
  const root = { isRoot: true, hasAptGet: true, noInstall: false };

  it('uses what it found, installing nothing', () => {
    expect(planProvisioning({ probes: probes(found('/opt/redis-server'), found('/usr/bin/chromium')), ...root })).toEqual({
      action: 'ready',
      paths: { redisServerBin: '/opt/redis-server', chromiumBin: '/usr/bin/chromium' },
    });
  });

  it('installs only the missing Debian packages when it runs as root with apt-get', () => {
    expect(planProvisioning({ probes: probes(missing, found('/usr/bin/chromium')), ...root })).toEqual({
      action: 'install',
      packages: ['redis-server'],
      commands: [
        ['apt-get', 'update', '-qq'],
        ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'redis-server'],
      ],
    });
    expect(planProvisioning({ probes: probes(missing, missing), ...root })).toMatchObject({ packages: ['redis-server', 'chromium'] });
  });

  it.each([
    ['not root', { isRoot: false }, 'sudo apt-get install -y redis-server chromium'],
    ['root without apt-get', { hasAptGet: false }, "with your system's package manager (Debian and Ubuntu: apt-get install -y redis-server chromium)"],
    ['POSTSCHED_NO_INSTALL=1', { noInstall: true }, '  apt-get install -y redis-server chromium'],
  ])('stops with one message that says what to install or set when %s', (_, over, install) => {
    const plan = planProvisioning({ probes: probes(missing, missing), ...root, ...over });
    expect(plan.action).toBe('fail');
    const message = (plan as { message: string }).message;
    expect(message).toContain(install);
    expect(message).toContain('REDIS_SERVER_BIN=/path/to/redis-server CHROMIUM_BIN=/path/to/chromium npm test');
    expect(message.startsWith('npm test needs redis-server and chromium')).toBe(true);
  });

  it('never installs over a *_BIN variable that names no executable: it says what is wrong with it', () => {
    const plan = planProvisioning({ probes: probes({ badVariable: 'REDIS_SERVER_BIN=/nope is not an executable file' }, missing), ...root });
    expect(plan).toEqual({ action: 'fail', message: 'REDIS_SERVER_BIN=/nope is not an executable file' });
  });

  it('names only what is missing', () => {
    expect(missingMessage([CHROMIUM], { isRoot: false, hasAptGet: true })).toBe(
      [
        'npm test needs chromium (chromium: the consent page test), and cannot find it.',
        'Install it once:',
        '  sudo apt-get install -y chromium',
        'or point to an existing one:',
        '  CHROMIUM_BIN=/path/to/chromium npm test',
      ].join('\n'),
    );
  });

  it('finds an executable on the PATH, and not a directory or a plain file', () => {
    expect(findOnPath(['node'], `/nonexistent:${join(process.execPath, '..')}`)).toBe(join(process.execPath, '..', 'node'));
    expect(findOnPath(['node'], '/nonexistent:')).toBeUndefined();
    expect(findOnPath(['tmp'], '/')).toBeUndefined(); // /tmp is a directory
  });
});

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const IS_ROOT = process.getuid?.() === 0;

/** Runs vitest on `files` in a child process with `env` (and this process's env without vitest's own). */
function runVitest(files: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'PATH' && k !== 'NODE_OPTIONS'));
  for (const name of ['REDIS_SERVER_BIN', 'CHROMIUM_BIN', 'POSTGRES_BIN_DIR', 'POSTSCHED_NO_INSTALL', 'POSTSCHED_INSTALL_DRY_RUN']) delete inherited[name];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [VITEST, 'run', ...files], { cwd: ROOT, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('npm test on a machine without redis-server and chromium (vitest as a child process)', () => {
  let bare: string; // a PATH with node only
  let withApt: string; // node and apt-get
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'postsched-path-'));
    bare = join(dir, 'bare');
    withApt = join(dir, 'apt');
    for (const bin of [bare, withApt]) {
      await mkdir(bin);
      await symlink(process.execPath, join(bin, 'node'));
    }
    const aptGet = findOnPath(['apt-get'], process.env['PATH']);
    if (aptGet !== undefined) await symlink(aptGet, join(withApt, 'apt-get'));
  });
  afterAll(async () => {
    if (bare !== undefined) await rm(join(bare, '..'), { recursive: true, force: true });
  });

  it('installs them with apt-get when it runs as root (dry run: prints the commands), before any test runs', async () => {
    const { code, output } = await runVitest(['test/errors.test.ts'], { PATH: withApt, POSTSCHED_INSTALL_DRY_RUN: '1' });
    expect(code).toBe(1);
    if (IS_ROOT && findOnPath(['apt-get'], process.env['PATH']) !== undefined) {
      expect(output).toContain("Test set-up: installing redis-server, chromium from Debian's packages (missing on this machine) [dry run]…");
      expect(output).toContain('would run: apt-get update -qq');
      expect(output).toContain('would run: apt-get install -y -qq --no-install-recommends redis-server chromium');
    }
    expect(output).not.toMatch(/Tests: \d+ passed/);
  });

  it('stops with one message and exit code 1 where it may not install, and runs no test', async () => {
    const { code, output } = await runVitest(['test/errors.test.ts'], { PATH: bare });
    expect(code).toBe(1);
    expect(output).toContain('npm test needs redis-server and chromium');
    expect(output).toContain('REDIS_SERVER_BIN=/path/to/redis-server CHROMIUM_BIN=/path/to/chromium npm test');
    expect(output.match(/npm test needs/g)).toHaveLength(1);
    expect(output).not.toMatch(/Tests: \d+ passed|Error:|\n\s+at /);
  });

  it('POSTSCHED_NO_INSTALL=1 gives the message instead of installing', async () => {
    const { code, output } = await runVitest(['test/errors.test.ts'], { PATH: withApt, POSTSCHED_NO_INSTALL: '1', POSTSCHED_INSTALL_DRY_RUN: '1' });
    expect(code).toBe(1);
    expect(output).not.toContain('would run');
    expect(output).toContain('npm test needs redis-server and chromium');
  });

  it('uses REDIS_SERVER_BIN and CHROMIUM_BIN when the PATH has neither', async () => {
    const { code, output } = await runVitest(['test/errors.test.ts'], {
      PATH: bare,
      REDIS_SERVER_BIN: inject('redisServerBin'),
      CHROMIUM_BIN: inject('chromiumBin'),
    });
    expect(output).toMatch(/Tests: 5 passed, 0 failed, 0 skipped/); // test/errors.test.ts has 5 tests
    expect(code).toBe(0);
  });

  it('says what is wrong with a REDIS_SERVER_BIN that names no program', async () => {
    const { code, output } = await runVitest(['test/errors.test.ts'], { PATH: withApt, REDIS_SERVER_BIN: '/nonexistent/redis-server', POSTSCHED_INSTALL_DRY_RUN: '1' });
    expect(code).toBe(1);
    expect(output).toContain('REDIS_SERVER_BIN=/nonexistent/redis-server is not an executable file');
    expect(output).not.toContain('would run');
  });

  it('a redis-server that fails to start shows its own error, with no knock-on error from the clean-up hooks', async () => {
    const { code, output } = await runVitest(['test/redis/store.test.ts', 'test/redis/lock.test.ts', 'test/redis/unavailable.test.ts', 'test/redis/multi-process.test.ts'], {
      PATH: bare,
      REDIS_SERVER_BIN: '/bin/false',
      CHROMIUM_BIN: inject('chromiumBin'),
    });
    expect(code).toBe(1);
    expect(output).toContain('exited with code 1 before it was ready');
    expect(output).not.toContain('Cannot read properties of undefined');
    expect(output).not.toContain('TypeError');
  }, 120_000);
});

describe('withSystemDirs (the PATH apt-get runs with, and where installed programs are looked for)', () => {
  it("adds Debian's program folders after the given ones, once each", () => {
    expect(withSystemDirs('/opt/bin:/usr/bin')).toBe('/opt/bin:/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin:/bin');
    expect(withSystemDirs(undefined)).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
  });
});

describe('PostgreSQL (initdb, pg_ctl and postgres, from one folder)', () => {
  const POSTGRES = TEST_TOOLS.find((t) => t.key === 'postgresBinDir') as TestTool;
  let root: string;
  let full: string; // a folder with all three programs
  let partial: string; // initdb only
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'postsched-pg-probe-'));
    full = join(root, 'lib', '16', 'bin');
    partial = join(root, 'lib', '15', 'bin');
    for (const dir of [full, partial]) await mkdir(dir, { recursive: true });
    for (const name of ['initdb', 'pg_ctl', 'postgres']) await symlink(process.execPath, join(full, name));
    await symlink(process.execPath, join(partial, 'initdb'));
  });
  afterAll(async () => {
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  it('is installed from Debian\'s postgresql package, with the others', () => {
    const probes = new Map(TEST_TOOLS.map((t) => [t, t === POSTGRES ? missing : found(`/usr/bin/${t.names[0]}`)] as const));
    expect(planProvisioning({ probes, isRoot: true, hasAptGet: true, noInstall: false })).toMatchObject({ action: 'install', packages: ['postgresql'] });
  });

  it('finds the folder on the PATH, in POSTGRES_BIN_DIR, or in a Debian version folder, newest first; never a folder missing one', () => {
    expect(probe(POSTGRES, { PATH: `${partial}:${full}` })).toEqual({ path: full });
    expect(probe(POSTGRES, { PATH: partial, POSTGRES_BIN_DIR: full })).toEqual({ path: full });
    expect(probe(POSTGRES, { PATH: '/nonexistent', POSTGRES_BIN_DIR: partial })).toEqual({
      badVariable: `POSTGRES_BIN_DIR=${partial} is not a folder holding initdb, pg_ctl, postgres: fix it, or unset it to let npm test find or install postgresql.`,
    });
    expect(debianPostgresDirs(join(root, 'lib'))).toEqual([full, partial]);
    expect(debianPostgresDirs(join(root, 'nonexistent'))).toEqual([]);
  });

  it('says which variable to set where it may not install', () => {
    expect(missingMessage([POSTGRES], { isRoot: false, hasAptGet: true })).toBe(
      [
        'npm test needs initdb (initdb: the PostgreSQL token store tests), and cannot find it.',
        'Install it once:',
        '  sudo apt-get install -y postgresql',
        'or point to an existing one:',
        '  POSTGRES_BIN_DIR=/path/to/postgresql/bin npm test',
      ].join('\n'),
    );
  });
});

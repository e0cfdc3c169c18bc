/**
 * The programs the test suite runs besides Node: `redis-server` (the Redis token store tests start their own),
 * PostgreSQL's `initdb`, `pg_ctl` and `postgres` (the Postgres token store tests start their own server) and
 * `chromium` (the consent page is clicked in a real headless browser). `npm test` provisions them itself,
 * from vitest's global set-up (test/support/global-setup.ts), so a fresh machine needs nothing beyond `npm ci`:
 *
 * - found (the `*_BIN` variable, else the PATH; PostgreSQL: `POSTGRES_BIN_DIR`, else the PATH, else Debian's
 *   /usr/lib/postgresql/<version>/bin, newest first): used as is;
 * - missing, running as root with apt-get (a fresh Debian CI machine or container): Debian's packages are
 *   installed, once;
 * - missing otherwise: one message that says what to install or which variable to set, and the run stops.
 *
 * `POSTSCHED_NO_INSTALL=1` never installs (the message instead); `POSTSCHED_INSTALL_DRY_RUN=1` prints the apt-get
 * commands instead of running them (how the tests check this path on a machine that has both programs).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** A program the tests need. */
export interface TestTool {
  /** What the tests call it, and the provided-context key they `inject()`. */
  readonly key: 'redisServerBin' | 'chromiumBin' | 'postgresBinDir';
  /** The environment variable that points to an existing binary (with `allNames`: to the folder of the binaries). */
  readonly envVar: 'REDIS_SERVER_BIN' | 'CHROMIUM_BIN' | 'POSTGRES_BIN_DIR';
  /** Names to look for on the PATH, in order. */
  readonly names: readonly string[];
  /**
   * Every one of `names` is needed, from one folder (PostgreSQL's `initdb`, `pg_ctl`, `postgres`): the tool's path is
   * that folder, looked for on the PATH and then in `moreDirs()`.
   */
  readonly allNames?: true;
  /** Folders to look in after the PATH (Debian keeps PostgreSQL's programs off the PATH). */
  readonly moreDirs?: () => string[];
  /** Debian's package. */
  readonly debianPackage: string;
  /** Which tests need it, for the message. */
  readonly neededBy: string;
}

export const TEST_TOOLS: readonly TestTool[] = [
  { key: 'redisServerBin', envVar: 'REDIS_SERVER_BIN', names: ['redis-server'], debianPackage: 'redis-server', neededBy: 'the Redis token store tests' },
  { key: 'chromiumBin', envVar: 'CHROMIUM_BIN', names: ['chromium', 'chromium-browser'], debianPackage: 'chromium', neededBy: 'the consent page test' },
  {
    key: 'postgresBinDir',
    envVar: 'POSTGRES_BIN_DIR',
    names: ['initdb', 'pg_ctl', 'postgres'],
    allNames: true,
    moreDirs: debianPostgresDirs,
    debianPackage: 'postgresql',
    neededBy: 'the PostgreSQL token store tests',
  },
];

/** Debian's /usr/lib/postgresql/<version>/bin folders, the newest version first. */
export function debianPostgresDirs(root = '/usr/lib/postgresql'): string[] {
  let versions: string[];
  try {
    versions = readdirSync(root);
  } catch {
    return [];
  }
  return versions
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(root, v, 'bin'));
}

/** What was found of each tool: its path, or why the variable that names it is unusable. */
export type Probe = { path: string } | { missing: true } | { badVariable: string };

/** The decision, from what was found and what this process may do. Pure: unit-tested branch by branch. */
export type Plan =
  | { action: 'ready'; paths: Record<TestTool['key'], string> }
  | { action: 'install'; packages: string[]; commands: string[][] }
  | { action: 'fail'; message: string };

export interface PlanInput {
  probes: ReadonlyMap<TestTool, Probe>;
  isRoot: boolean;
  hasAptGet: boolean;
  /** `POSTSCHED_NO_INSTALL=1`. */
  noInstall: boolean;
}

export function planProvisioning({ probes, isRoot, hasAptGet, noInstall }: PlanInput): Plan {
  const badVariables = [...probes.values()].flatMap((p) => ('badVariable' in p ? [p.badVariable] : []));
  // A variable the user set is a choice: never install over it, say what is wrong with it.
  if (badVariables.length > 0) return { action: 'fail', message: badVariables.join('\n') };
  const missing = [...probes].filter(([, p]) => 'missing' in p).map(([tool]) => tool);
  if (missing.length === 0) {
    const paths = Object.fromEntries([...probes].map(([tool, p]) => [tool.key, (p as { path: string }).path]));
    return { action: 'ready', paths: paths as Record<TestTool['key'], string> };
  }
  const packages = missing.map((t) => t.debianPackage);
  if (isRoot && hasAptGet && !noInstall) {
    return {
      action: 'install',
      packages,
      commands: [
        ['apt-get', 'update', '-qq'],
        ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...packages],
      ],
    };
  }
  return { action: 'fail', message: missingMessage(missing, { isRoot, hasAptGet }) };
}

/** The one message of a machine that lacks a tool and where the tests may not install it. */
export function missingMessage(missing: readonly TestTool[], { isRoot, hasAptGet }: { isRoot: boolean; hasAptGet: boolean }): string {
  const names = missing.map((t) => t.names[0]).join(' and ');
  const packages = missing.map((t) => t.debianPackage).join(' ');
  const install = hasAptGet
    ? `  ${isRoot ? '' : 'sudo '}apt-get install -y ${packages}`
    : `  with your system's package manager (Debian and Ubuntu: apt-get install -y ${packages})`;
  const variables = missing.map((t) => `${t.envVar}=/path/to/${t.allNames ? 'postgresql/bin' : t.names[0]}`).join(' ');
  return [
    `npm test needs ${names} (${missing.map((t) => `${t.names[0]}: ${t.neededBy}`).join('; ')}), and cannot find ${missing.length > 1 ? 'them' : 'it'}.`,
    `Install ${missing.length > 1 ? 'them' : 'it'} once:`,
    install,
    `or point to ${missing.length > 1 ? 'existing ones' : 'an existing one'}:`,
    `  ${variables} npm test`,
  ].join('\n');
}

/** The first executable file called `name` on `pathVariable`, or `undefined`. */
export function findOnPath(names: readonly string[], pathVariable: string | undefined): string | undefined {
  for (const name of names) {
    for (const dir of (pathVariable ?? '').split(delimiter)) {
      if (dir === '') continue;
      const candidate = join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first folder of `dirs` that holds every one of `names` as an executable file. */
export function findDirWithAll(names: readonly string[], dirs: readonly string[]): string | undefined {
  return dirs.find((dir) => dir !== '' && names.every((name) => isExecutableFile(join(dir, name))));
}

export function probe(tool: TestTool, env: NodeJS.ProcessEnv): Probe {
  const named = env[tool.envVar];
  if (tool.allNames) {
    if (named !== undefined && named !== '') {
      if (findDirWithAll(tool.names, [named]) !== undefined) return { path: named };
      return { badVariable: `${tool.envVar}=${named} is not a folder holding ${tool.names.join(', ')}: fix it, or unset it to let npm test find or install ${tool.debianPackage}.` };
    }
    const dir = findDirWithAll(tool.names, [...(env['PATH'] ?? '').split(delimiter), ...(tool.moreDirs?.() ?? [])]);
    return dir === undefined ? { missing: true } : { path: dir };
  }
  if (named !== undefined && named !== '') {
    const path = isAbsolute(named) ? (isExecutableFile(named) ? named : undefined) : findOnPath([named], env['PATH']);
    if (path !== undefined) return { path };
    return { badVariable: `${tool.envVar}=${named} is not an executable file: fix it, or unset it to let npm test find or install ${tool.names[0]}.` };
  }
  const found = findOnPath(tool.names, env['PATH']);
  return found === undefined ? { missing: true } : { path: found };
}

/** Debian's folders of programs, the sbin ones included (root's PATH). */
const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** `pathVariable` with the system's program folders added after it (its own folders keep precedence). */
export function withSystemDirs(pathVariable: string | undefined): string {
  const dirs = (pathVariable ?? '').split(delimiter).filter((d) => d !== '');
  return [...dirs, ...SYSTEM_DIRS.filter((d) => !dirs.includes(d))].join(delimiter);
}

/** A provisioning failure whose message is the whole story: shown alone, without a stack. */
export class TestToolsError extends Error {
  override readonly name = 'TestToolsError';
}

export interface ProvisionOptions {
  env?: NodeJS.ProcessEnv;
  isRoot?: boolean;
  /** Progress lines (the install can take a minute on a fresh machine). */
  log?: (line: string) => void;
}

/** Finds every tool, installing the missing ones when allowed; throws a `TestToolsError` otherwise. */
export async function provisionTestTools(options: ProvisionOptions = {}): Promise<Record<TestTool['key'], string>> {
  const env = options.env ?? process.env;
  const isRoot = options.isRoot ?? process.getuid?.() === 0;
  const log = options.log ?? ((line: string) => console.log(line));
  const probeAll = () => new Map(TEST_TOOLS.map((tool) => [tool, probe(tool, env)] as const));
  const input = { isRoot, hasAptGet: findOnPath(['apt-get'], env['PATH']) !== undefined, noInstall: env['POSTSCHED_NO_INSTALL'] === '1' };
  const plan = planProvisioning({ probes: probeAll(), ...input });
  if (plan.action === 'ready') return plan.paths;
  if (plan.action === 'fail') throw new TestToolsError(plan.message);

  const dryRun = env['POSTSCHED_INSTALL_DRY_RUN'] === '1';
  log(`Test set-up: installing ${plan.packages.join(', ')} from Debian's packages (missing on this machine)${dryRun ? ' [dry run]' : ''}…`);
  for (const command of plan.commands) {
    log(`  ${dryRun ? 'would run' : 'running'}: ${command.join(' ')}`);
    if (!dryRun) await run(command, env);
  }
  const stillMissing = planProvisioning({ probes: probeAll(), ...input, noInstall: true });
  if (dryRun) throw new TestToolsError(`Dry run: nothing was installed.\n${stillMissing.action === 'fail' ? stillMissing.message : ''}`);
  // apt installs into the system's folders, which a trimmed PATH may lack: look there too.
  const systemEnv = { ...env, PATH: withSystemDirs(env['PATH']) };
  const after = planProvisioning({ probes: new Map(TEST_TOOLS.map((tool) => [tool, probe(tool, systemEnv)] as const)), ...input, noInstall: true });
  if (after.action === 'ready') return after.paths;
  throw new TestToolsError(`apt-get finished, but a program is still missing.\n${after.action === 'fail' ? after.message : ''}`);
}

/** Runs one apt-get command, bounded in time; its output is shown only when it fails. */
function run([command, ...args]: string[], env: NodeJS.ProcessEnv, timeoutMs = 15 * 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command as string, args, {
      // apt-get runs helpers (gpgv, dpkg, ldconfig) found on the PATH: give it the system's folders too.
      env: { ...env, PATH: withSystemDirs(env['PATH']), DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8_000); // the tail says what went wrong
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (error) => reject(new TestToolsError(`${command} could not start: ${error.message}`)));
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new TestToolsError(`${[command, ...args].join(' ')} failed (${signal ?? `exit code ${code}`}):\n${output.trim()}`));
    });
  });
}

/**
 * Starts a real PostgreSQL server for one test file (or benchmark): `initdb` in a temp folder, a free loopback port,
 * its unix socket in that folder, stopped by the PID of its postmaster. As root (a CI container), `initdb` and the
 * server refuse to run: both then run as the `postgres` user (Debian's package makes it) through `runuser`, and
 * the folder is given to that user. No vitest in here; tests use test/postgres/postgres-server.ts, which passes the
 * folder of the binaries that the test set-up provisioned (test/support/test-tools.ts).
 *
 * `fsync=off`: the fault tests restart the server (`-m fast`, `-m immediate`) but never the machine, and a
 * committed transaction's WAL is in the OS's cache, replayed on start; what `fsync` adds is only for power loss.
 */
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.js';

export interface PostgresServer {
  readonly port: number;
  /** A connection string for node-postgres (`new Pool({ connectionString })`), over TCP on 127.0.0.1. */
  readonly url: string;
  /** `pg_ctl restart -m <mode>`: `fast` (clients disconnected, a clean shutdown) or `immediate` (a crash, then recovery). */
  restart(mode: 'fast' | 'immediate'): Promise<void>;
  /** Stops the server (by the postmaster's PID, SIGINT: a fast shutdown) and removes its folder. Safe to call twice. */
  stop(): Promise<void>;
}

const IS_ROOT = process.getuid?.() === 0;

export async function startPostgresProcess(binDir: string): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), 'postsched-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const user = IS_ROOT ? 'postgres' : userInfo().username;
  if (IS_ROOT) {
    const uid = Number((await run('id', ['-u', 'postgres'])).trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const bin = (name: string) => join(binDir, name);
  const asServer = (command: string, args: string[]) => (IS_ROOT ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args));
  try {
    await asServer(bin('initdb'), ['-D', data, '-U', user, '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let port = 0;
  let lastError: unknown;
  // A free port can be taken between the probe and the server's bind: try a few.
  for (let attempt = 0; attempt < 5 && port === 0; attempt++) {
    const candidate = await freePort();
    const options = `-p ${candidate} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200`;
    try {
      await asServer(bin('pg_ctl'), ['-D', data, '-l', log, '-o', options, '-w', '-t', '60', 'start']);
      port = candidate;
    } catch (error) {
      lastError = error;
    }
  }
  if (port === 0) {
    rmSync(dir, { recursive: true, force: true });
    throw lastError;
  }
  let stopped = false;
  return {
    port,
    url: `postgresql://${user}@127.0.0.1:${port}/postgres`,
    async restart(mode) {
      await asServer(bin('pg_ctl'), ['-D', data, '-l', log, '-m', mode, '-w', '-t', '60', 'restart']);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const pid = postmasterPid(data);
      if (pid !== undefined) {
        try {
          process.kill(pid, 'SIGINT');
          while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The first line of postmaster.pid: the server's PID (`undefined` when it is not running). */
function postmasterPid(data: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

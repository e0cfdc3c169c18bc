/**
 * CPU accounting and core pinning for the request measures, so that a table can say which side, the client
 * (this process) or the loopback server (its own process), limits a contender. Linux only: CPU time of the
 * server from /proc/<pid>/stat, pinning with `taskset` (util-linux). Elsewhere both report `undefined`.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Whether `taskset` runs here (util-linux; not on macOS or Windows). */
export const tasksetAvailable: boolean = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;

const ticksPerSecond = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** CPU time (user + system) of process `pid` so far in ms, from /proc; `undefined` where there is no /proc. */
export function processCpuMs(pid: number): number | undefined {
  try {
    // Fields after the command name, which is in parentheses and may hold spaces: state is 3rd, utime 14th, stime 15th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** CPU time of this process so far in ms, every thread (the event loop, GC, libuv's pool). */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Pins every thread of process `pid` to `cpus` (a taskset list such as "0"); returns the list it had, to give
 * back with `pin(pid, previous)`. New threads inherit the pinning of the thread that makes them.
 */
export function pin(pid: number, cpus: string): string {
  const before = spawnSync('taskset', ['-pc', String(pid)], { encoding: 'utf8' });
  const previous = /list:\s*(\S+)/.exec(before.stdout)?.[1];
  const after = spawnSync('taskset', ['-apc', cpus, String(pid)], { encoding: 'utf8' });
  if (previous === undefined || after.status !== 0) throw new Error(`taskset could not pin ${pid} to ${cpus}: ${after.stderr}`);
  return previous;
}

/** CPU ms per ms of wall time as a share of one core ("97%"; above 100% when several cores worked). */
export function coreShare(cores: number | undefined): string {
  return cores === undefined ? 'n/a' : `${Math.round(100 * cores)}%`;
}

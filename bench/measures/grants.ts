/**
 * Idle grants kept alive (`users.keepGrantsAlive`): 10,000 idle grants (1 % of them marked as needing reconnection)
 * and 4 worker processes each running the sweep every second, on a PostgreSQL server and on a Redis server this
 * measure starts (127.0.0.1), against the fake service. The window is compressed to 120 s of real time (a 7-day window
 * behaves the same, slower): every grant was last refreshed when the workers start, so each is due once its slot in
 * the window (from the hash of its id) passes. Counted from the workers' own log of their refreshes and the fake's
 * token requests per grant: refreshes per grant and window (duplicates, missed windows), requests for marked grants,
 * and the refreshes in each twelfth of the window (a "minute" of a 12-minute window) against their mean.
 */
import { createHash } from 'node:crypto';
import { probe, TEST_TOOLS, withSystemDirs } from '../../test/support/test-tools.js';
import { startPostgresProcess } from '../../test/support/postgres-process.js';
import { startRedisProcess } from '../../test/support/redis-process.js';
import { startSweepRig } from '../../test/grants/sweep-rig.js';
import type { Section, Verdict } from '../lib/report.js';

const WORKERS = 4;
const WINDOW_MS = 120_000;
/** After the window, how long the workers go on: refreshes due near its end land then. */
const TAIL_MS = 15_000;
const BUCKETS = 12;

export async function measureGrants({ quick }: { quick: boolean }): Promise<Section[]> {
  const users = quick ? 2_000 : 10_000;
  const sections: Section[] = [];
  for (const kind of ['postgres', 'redis'] as const) sections.push(await measureOne(kind, users));
  return sections;
}

async function measureOne(kind: 'postgres' | 'redis', users: number): Promise<Section> {
  const server = kind === 'postgres' ? await startPostgresProcess(tool('postgresBinDir')) : await startRedisProcess(tool('redisServerBin'));
  try {
    const rig = await startSweepRig({ target: { kind, url: server.url }, users, processes: WORKERS, olderThanMs: WINDOW_MS, concurrency: 8 });
    try {
      const marked = new Set(rig.userIds.filter((_, i) => i % 100 === 42));
      for (const userId of marked) await rig.mark(userId, 'invalid_grant');
      await rig.age(0); // every grant refreshed now: each is due when its slot passes
      const startedAt = Date.now();
      for (const w of rig.workers) w.send({ type: 'loop', everyMs: 1_000 });
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + TAIL_MS));
      const results = await Promise.all(
        rig.workers.map((w) => {
          w.send({ type: 'stop' });
          return w.next('swept');
        }),
      );
      const log = results.flatMap((r) => r.log ?? []);
      const perWindow = new Map<string, number>();
      for (const [userId, at] of log) {
        const key = `${userId} ${Math.floor((at - offsetOf(userId)) / WINDOW_MS)}`;
        perWindow.set(key, (perWindow.get(key) ?? 0) + 1);
      }
      const duplicates = [...perWindow.values()].reduce((n, c) => n + c - 1, 0);
      // Every passing of a live grant's slot from the start to the end of the window must have its refresh.
      let expected = 0;
      let missed = 0;
      for (const userId of rig.userIds) {
        if (marked.has(userId)) continue;
        const offset = offsetOf(userId);
        for (let k = Math.ceil((startedAt - offset) / WINDOW_MS); offset + k * WINDOW_MS <= startedAt + WINDOW_MS; k++) {
          expected++;
          if (!perWindow.has(`${userId} ${k}`)) missed++;
        }
      }
      const requests = rig.requests();
      const deadAttempted = [...marked].reduce((n, u) => n + (requests.get(u) ?? 0), 0);
      const buckets = Array.from({ length: BUCKETS }, () => 0);
      for (const [, at] of log) {
        const b = Math.floor(((at - startedAt) * BUCKETS) / WINDOW_MS);
        if (b >= 0 && b < BUCKETS) buckets[b]!++;
      }
      const mean = buckets.reduce((a, b) => a + b, 0) / BUCKETS;
      const spread = Math.max(...buckets.map((b) => Math.abs(b - mean) / mean));
      const sum = (name: 'refreshed' | 'skipped' | 'dead' | 'failed') => results.reduce((n, r) => n + r[name], 0);
      const verdicts: Verdict[] = [
        { target: 'each grant refreshed once per window: 0 duplicates', measured: String(duplicates), met: duplicates === 0 },
        { target: '0 missed windows', measured: `${missed} of ${expected}`, met: missed === 0 },
        { target: '0 requests for marked grants', measured: String(deadAttempted), met: deadAttempted === 0 },
        { target: `refreshes per twelfth of the window within ±25 % of their mean`, measured: `${(spread * 100).toFixed(1)} % (${Math.min(...buckets)}–${Math.max(...buckets)}, mean ${mean.toFixed(0)})`, met: spread <= 0.25 },
      ];
      await rig.stop();
      return {
        title: `Idle grants kept alive: ${users.toLocaleString('en')} grants × ${WORKERS} workers (${kind === 'postgres' ? 'PostgreSQL' : 'Redis'})`,
        method:
          `\`npm run bench -- --only=grants\`: ${users.toLocaleString('en')} grants (1 % marked needs-reconnect), ${WORKERS} processes each running ` +
          '`users.keepGrantsAlive({ olderThanMs: 120_000, concurrency: 8 })` every second for the window and 15 s more, ' +
          'against the fake service. Window compressed to 120 s; every grant last refreshed at the start. Refreshes counted ' +
          'from the workers\' log (per grant and window: the window of a refresh is the last passing of its slot) and the fake\'s requests per grant.',
        unit: 'count',
        rows: [
          { name: 'refreshes (all workers)', value: String(log.length), note: `returned: refreshed ${sum('refreshed')}, skipped ${sum('skipped')}, dead ${sum('dead')}, failed ${sum('failed')}` },
          { name: 'token requests (the fake)', value: String(rig.fake.stats.tokenRequests.refresh_token) },
          { name: 'windows due', value: String(expected) },
          { name: 'duplicates', value: String(duplicates) },
          { name: 'missed', value: String(missed) },
          { name: 'requests for marked grants', value: String(deadAttempted) },
          { name: 'refreshes per twelfth', value: buckets.join(' ') },
        ],
        target: verdicts.map((v) => v.target).join('; '),
        met: verdicts.every((v) => v.met === true),
        verdicts,
      };
    } catch (error) {
      await rig.stop();
      throw error;
    }
  } finally {
    await server.stop();
  }
}

/** The grant's slot in the window, as the stores compute it: the first 32 bits of the MD5 of the id, modulo the window. */
function offsetOf(userId: string): number {
  return Number.parseInt(createHash('md5').update(userId).digest('hex').slice(0, 8), 16) % WINDOW_MS;
}

function tool(key: 'postgresBinDir' | 'redisServerBin'): string {
  const found = probe(TEST_TOOLS.find((t) => t.key === key)!, { ...process.env, PATH: withSystemDirs(process.env['PATH']) });
  if (!('path' in found)) throw new Error(`needs ${key === 'postgresBinDir' ? 'PostgreSQL (apt-get install postgresql)' : 'redis-server (apt-get install redis-server)'}`);
  return found.path;
}

/**
 * Rate limits across a fleet: 4 worker processes (test/redis/fleet/rate-limit-worker.ts, the SDK as built: dist/),
 * 200 users (50 with --quick), each allowed 10 requests per 2 s window by a loopback service that answers 429 with
 * `Retry-After` beyond it and `RateLimit-*` within; every process makes 15 calls per user, 50 at a time. Rows:
 * - before: the SDK before the shared limiter (`BENCH_BEFORE_DIST`, a dist/ folder of an older build, when set;
 *   else a client per call, which shares nothing, as the SDK did);
 * - the in-process limiter alone (no Redis), and `RedisRateLimiter`;
 * - the service sending no `Retry-After` and no `RateLimit-*` (no wait may be invented);
 * - Redis stopped 3 s into the run.
 * Counted: failed calls, 429s per user per window (max, mean), requests that reached the service while a 429 had
 * told their user to wait, wall time ÷ the floor (calls per user ÷ limit × window).
 */
import { startRedisProcess } from '../../test/support/redis-process.js';
import { probe, TEST_TOOLS, withSystemDirs } from '../../test/support/test-tools.js';
import { type RateLimitFleetOptions, type RateLimitFleetResult, startRateLimitFleet } from '../../test/redis/fleet/rate-limit-rig.js';
import { fileURLToPath } from 'node:url';
import { fmt, ratioVerdict, type Row, type Section } from '../lib/report.js';

const DIST = fileURLToPath(new URL('../../dist', import.meta.url));

export async function measureRateLimit({ quick }: { quick: boolean }): Promise<Section> {
  const users = quick ? 50 : 200;
  const found = probe(TEST_TOOLS[0]!, { ...process.env, PATH: withSystemDirs(process.env['PATH']) });
  if (!('path' in found)) throw new Error('needs redis-server: apt-get install redis-server, or set REDIS_SERVER_BIN');
  const before = process.env['BENCH_BEFORE_DIST'];
  const variants: Array<{ name: string; options: Partial<RateLimitFleetOptions>; stopRedisAfterMs?: number }> = [
    { name: before === undefined ? 'before: a client per call (nothing shared)' : 'before: the SDK without the limiter', options: before === undefined ? { limiter: 'per-call' } : { limiter: 'process', sdk: before } },
    { name: 'in-process limiter only', options: { limiter: 'process' } },
    { name: 'RedisRateLimiter', options: { limiter: 'redis' } },
    { name: 'RedisRateLimiter, no rate-limit headers', options: { limiter: 'redis', headers: false } },
    { name: 'RedisRateLimiter, Redis stopped after 3 s', options: { limiter: 'redis' }, stopRedisAfterMs: 3_000 },
  ];
  const rows: Row[] = [];
  const results = new Map<string, RateLimitFleetResult>();
  for (const variant of variants) {
    const redis = await startRedisProcess(found.path);
    const fleet = await startRateLimitFleet({ redisUrl: redis.url, users, sdk: DIST, ...variant.options });
    try {
      const running = fleet.run();
      if (variant.stopRedisAfterMs !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, variant.stopRedisAfterMs));
        await redis.stop();
      }
      const r = await running;
      results.set(variant.name, r);
      const failed = Object.entries(r.failed).map(([name, n]) => `${n} ${name}`).join(', ') || '0';
      rows.push({
        name: variant.name,
        value: `${fmt.x(r.wallMs / r.floorMs)} (${(r.wallMs / 1000).toFixed(1)} s)`,
        note: `failed ${failed}; 429s per user per window max ${r.max429PerWindow}, mean ${r.mean429PerWindow.toFixed(2)}; sent while blocked ${r.arrivedWhileBlocked}; requests ${fmt.int(r.requests)} for ${fmt.int(r.succeeded + Object.values(r.failed).reduce((a, b) => a + b, 0))} calls`,
      });
      console.log(`  ${variant.name}: ${rows.at(-1)!.value}; ${rows.at(-1)!.note}`);
    } finally {
      await fleet.stop();
      await redis.stop();
    }
  }
  const shared = results.get('RedisRateLimiter')!;
  const verdicts = [
    ratioVerdict('RedisRateLimiter: wall time ≤ 1.3x the floor', shared.wallMs / shared.floorMs, 1.3, '≤'),
    { target: 'RedisRateLimiter: 429s per user per window ≤ 1 (max)', measured: String(shared.max429PerWindow), met: shared.max429PerWindow <= 1 },
    { target: 'RedisRateLimiter: requests sent while blocked = 0', measured: String(shared.arrivedWhileBlocked), met: shared.arrivedWhileBlocked === 0 },
    { target: 'RedisRateLimiter: failed calls = 0', measured: String(Object.values(shared.failed).reduce((a, b) => a + b, 0)), met: Object.keys(shared.failed).length === 0 },
  ];
  return {
    title: `Rate limits: 4 processes, ${users} users, 10 requests per 2 s per user, 15 calls per user per process`,
    method:
      'Loopback service: a window per user from its first request; 200 with RateLimit-Limit/-Remaining/-Reset within, 429 with Retry-After (whole seconds, rounded up) beyond. ' +
      'Workers: one UserClients each (dist/), calls in a shuffled order, 50 in flight per process unless said. Floor: calls per user ÷ limit × window = 12 s. ' +
      '"Sent while blocked": requests that arrived while a 429 the service answered had told their user to wait (a request already on its way when another process was told still arrives).',
    unit: 'wall time ÷ floor',
    rows,
    target: 'wall ≤ 1.3x floor; 429s per user per window ≤ 1; 0 sent while blocked; 0 failed',
    met: verdicts.every((v) => v.met === true),
    verdicts,
  };
}

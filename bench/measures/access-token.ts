/**
 * `getAccessToken()` on a valid token, awaited calls per second, against the least an async getter can
 * cost: awaiting a plain property read. The hot path is a cache read (a clock read and a comparison).
 */
import { TokenManager } from '@postsched/sdk';
import { fmt, type Section } from '../lib/report.js';
import { interleaved } from '../lib/stats.js';

const BATCH = 10_000;

export async function measureAccessToken({ quick }: { quick: boolean }): Promise<Section> {
  const manager = new TokenManager({
    oauth: {
      refresh: () => Promise.reject(new Error('the benchmark token is valid for a day: no refresh expected')),
    },
  });
  await manager.setTokens({
    accessToken: 'tok_bench_access',
    refreshToken: 'tok_bench_refresh',
    expiresAt: Date.now() + 86_400_000,
    scopes: ['posts:read'],
    tokenType: 'bearer',
  });
  const holder = { accessToken: 'tok_bench_access', expiresAt: Date.now() + 86_400_000 };
  let sink = 0;
  const rounds = quick ? 3 : 9;
  const roundMs = quick ? 300 : 1000;
  const result = await interleaved(
    {
      floor: async () => {
        for (let i = 0; i < BATCH; i++) sink += (await holder.accessToken).length;
        return BATCH;
      },
      clock: async () => {
        for (let i = 0; i < BATCH; i++) sink += (await (Date.now() < holder.expiresAt - 60_000 ? holder.accessToken : '')).length;
        return BATCH;
      },
      ours: async () => {
        for (let i = 0; i < BATCH; i++) sink += (await manager.getAccessToken()).length;
        return BATCH;
      },
    },
    { rounds, roundMs },
  );
  if (sink === 0) throw new Error('nothing was read');
  const target = 10_000_000;
  return {
    title: 'getAccessToken() on a valid token',
    method:
      `Awaited calls per second in loops of ${fmt.int(BATCH)}, median of ${rounds} interleaved rounds of ${roundMs} ms. ` +
      'Floor: `await` of a plain property read. Ratio: ours ÷ floor.',
    unit: 'calls/s',
    rows: [
      { name: 'floor: await holder.accessToken', value: fmt.int(result.floor) },
      {
        name: 'the same with an expiry check (Date.now())',
        value: fmt.int(result.clock),
        ratio: fmt.x(result.clock / result.floor),
        note: 'the least a getter that checks expiry can cost',
      },
      { name: 'TokenManager.getAccessToken()', value: fmt.int(result.ours), ratio: fmt.x(result.ours / result.floor) },
    ],
    target: '≥ 10 million/s (a cache read)',
    met: result.ours >= target,
    notes: [
      `ours: ${fmt.x(result.ours / result.clock)} the property read with an expiry check; ` +
        `the floor itself runs at ${fmt.x(result.floor / target)} the target on this machine.`,
    ],
  };
}

/**
 * `getAccessToken()` on a valid token, awaited calls per second, against its floor: an awaited property read
 * with the expiry check (`Date.now()` against the expiry less the margin), the least a getter that must check
 * expiry can cost. Target (issue 16): ≥ 0.95x that floor, in the same run. The plain awaited property read is
 * shown beside it: the price of the clock read itself.
 */
import { TokenManager } from '@postsched/sdk';
import { fmt, ratioVerdict, type Section } from '../lib/report.js';
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
      plainRead: async () => {
        for (let i = 0; i < BATCH; i++) sink += (await holder.accessToken).length;
        return BATCH;
      },
      floor: async () => {
        for (let i = 0; i < BATCH; i++) sink += (await (Date.now() < holder.expiresAt - 60_000 ? holder.accessToken : '')).length;
        return BATCH;
      },
      ours: async () => {
        for (let i = 0; i < BATCH; i++) sink += (await manager.getAccessToken()).length;
        return BATCH;
      },
      // What the request pipeline does (src/http/auth.ts): a synchronous peek, awaiting only on a miss.
      peek: async () => {
        for (let i = 0; i < BATCH; i++) sink += (manager.peekAccessToken() ?? (await manager.getAccessToken())).length;
        return BATCH;
      },
    },
    { rounds, roundMs },
  );
  if (sink === 0) throw new Error('nothing was read');
  const verdict = ratioVerdict(
    'getAccessToken() ≥ 0.95x an awaited property read with the expiry check',
    result.ours / result.floor,
    0.95,
    '≥',
  );
  return {
    title: 'getAccessToken() on a valid token',
    method:
      `Awaited calls per second in loops of ${fmt.int(BATCH)}, median of ${rounds} interleaved rounds of ${roundMs} ms. ` +
      'Floor: `await` of a property read with the expiry check. Ratio: contender ÷ floor.',
    unit: 'calls/s',
    rows: [
      {
        name: 'floor: await of a property read with the expiry check',
        value: fmt.int(result.floor),
        note: 'the least a getter that checks expiry can cost',
      },
      {
        name: 'await of a plain property read (no expiry check)',
        value: fmt.int(result.plainRead),
        ratio: fmt.x(result.plainRead / result.floor),
        note: 'what the clock read costs: the difference',
      },
      { name: 'TokenManager.getAccessToken()', value: fmt.int(result.ours), ratio: fmt.x(result.ours / result.floor) },
      {
        name: 'peekAccessToken() ?? await getAccessToken()',
        value: fmt.int(result.peek),
        ratio: fmt.x(result.peek / result.floor),
        note: 'what the request pipeline does: no promise while the token is fresh',
      },
    ],
    target: verdict.target,
    met: verdict.met,
    verdicts: [verdict],
  };
}

/**
 * The token table / space objects (`PostgresTokenTable`, `RedisTokenSpace`): listing the grants that need
 * reconnecting, and the fleet sweep of idle grants (`UserClients.keepGrantsAlive`) run by 4 processes at once, on a
 * real PostgreSQL and a real Redis. Counts outcomes (token requests per grant, the counts returned), never time.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Redis } from 'ioredis';
import { OAuthClient, UserClients, ValidationError, type GrantInfo } from '@postsched/sdk';
import { MemoryTokenStore } from '@postsched/sdk';
import { RedisTokenSpace } from '@postsched/sdk/redis';
import { type PostgresServer, startPostgresServer } from '../postgres/postgres-server.js';
import { type RedisServer, startRedisServer } from '../redis/redis-server.js';
import { type SweepRig, startSweepRig, sweepAll } from './sweep-rig.js';

let postgres: PostgresServer;
let redis: RedisServer;
beforeAll(async () => {
  [postgres, redis] = await Promise.all([startPostgresServer(), startRedisServer()]);
});
afterAll(async () => {
  await Promise.all([postgres?.stop(), redis?.stop()]);
});

// Ten days: a grant's slot passes while a sweep runs (seconds) about once in 100,000 sweeps per grant. A slot that
// passes between a grant's refresh and the end of the sweep makes the grant due again, by design (it was refreshed
// before its moment of this window): with an hour's window that happened in about 1 run of 15 (refreshed 94 of 93).
const WINDOW_MS = 864_000_000;

describe.each(['postgres', 'redis'] as const)('on %s', (kind) => {
  let rig: SweepRig | undefined;
  afterEach(async () => {
    await rig?.stop();
    rig = undefined;
  });
  const target = () => ({ kind, url: kind === 'postgres' ? postgres.url : redis.url });

  it('grants() pages list every marked user exactly once, and the others as connected', { timeout: 60_000 }, async () => {
    rig = await startSweepRig({ target: target(), users: 25, processes: 0, olderThanMs: WINDOW_MS });
    const marked = rig.userIds.filter((_, i) => i % 4 === 1); // 6 users, spread over the pages
    for (const userId of marked) await rig.mark(userId, 'invalid_grant');

    const list = async (status?: 'connected' | 'needs_reconnect') => {
      const seen: GrantInfo[] = [];
      let pages = 0;
      for (let after: string | undefined; ; pages++) {
        const page = await rig!.space.grants({ ...(status === undefined ? {} : { status }), limit: 4, ...(after === undefined ? {} : { after }) });
        seen.push(...page.grants);
        if (page.next === undefined) break;
        after = page.next;
      }
      return { seen, pages };
    };
    const needs = await list('needs_reconnect');
    expect(needs.seen.map((g) => g.userId)).toEqual(marked);
    expect(needs.seen.every((g) => g.status === 'needs_reconnect' && g.reason === 'invalid_grant' && typeof g.since === 'number')).toBe(true);
    const connected = await list('connected');
    expect(connected.seen.map((g) => g.userId)).toEqual(rig.userIds.filter((u) => !marked.includes(u)));
    expect(connected.seen.every((g) => g.status === 'connected' && typeof g.refreshedAt === 'number')).toBe(true);
    expect((await list()).seen.map((g) => g.userId)).toEqual(rig.userIds);
  });

  it('4 processes sweeping at once refresh each due grant exactly once, skip marked ones, and a refused and an unreadable grant do not stop the rest', { timeout: 180_000 }, async () => {
    // 120 users: 100 due (last refreshed 2 windows ago), 20 refreshed just now (not due); of the due ones, 5 marked,
    // 1 whose refresh token the service refuses, 1 whose stored value cannot be read.
    rig = await startSweepRig({ target: target(), users: 120, processes: 4, olderThanMs: WINDOW_MS, concurrency: 4, refused: [7] });
    const due = rig.userIds.slice(0, 100);
    await rig.age(2 * WINDOW_MS, due);
    const marked = due.filter((_, i) => i % 20 === 3);
    for (const userId of marked) await rig.mark(userId, 'invalid_grant');
    const unreadable = due[11]!;
    await breakStoredValue(kind, target().url, rig, unreadable);

    const runs = await sweepAll(rig);
    console.log(`keepGrantsAlive in 4 processes on ${kind}:`, JSON.stringify(runs));

    const sum = (name: 'refreshed' | 'skipped' | 'dead' | 'failed') => runs.reduce((n, r) => n + r[name], 0);
    expect(sum('refreshed')).toBe(93);
    expect(sum('failed')).toBe(1); // the unreadable grant: its claim is kept, so the other processes pass it by
    // The refused grant: dead in each process that claimed it (Postgres: a second may claim it between the first's
    // claim and its refresh), and one refused request in all: the first refusal marks the store, which the others read.
    expect(sum('dead')).toBeGreaterThanOrEqual(1);
    expect(sum('dead')).toBeLessThanOrEqual(4);
    if (kind === 'redis') expect(sum('skipped')).toBe(0); // a claim there lasts half the window
    expect(rig.fake.stats.tokenRequests.refresh_token).toBe(93 + 1);
    const requests = rig.requests();
    const healthy = due.filter((u) => !marked.includes(u) && u !== unreadable && u !== rig!.userIds[7]);
    expect(healthy.filter((u) => requests.get(u) !== 1)).toEqual([]); // each exactly once
    expect(marked.map((u) => requests.get(u))).toEqual(marked.map(() => 0));
    expect(rig.userIds.slice(100).map((u) => requests.get(u))).toEqual(rig.userIds.slice(100).map(() => 0)); // not due
    // Nothing is due any more but the unreadable grant (still claimed) and, where the store marks a refused grant
    // (Postgres: `needs_reconnect_*`), not the refused one either: listed instead.
    const again = await sweepAll(rig);
    expect(again.reduce((n, r) => n + r.refreshed + r.skipped, 0)).toBe(0);
    if (kind === 'postgres') {
      expect((await rig.space.grants({ status: 'needs_reconnect' })).grants.map((g) => g.userId)).toContain(rig.userIds[7]);
      expect(again.reduce((n, r) => n + r.dead, 0)).toBe(0);
      expect(rig.fake.stats.tokenRequests.refresh_token).toBe(93 + 1);
    }
  });

  it('a grant whose tokens were written after its mark (a holder frozen mid-refresh that saved late) is connected again: listed so, and swept', { timeout: 60_000 }, async () => {
    rig = await startSweepRig({ target: target(), users: 3, processes: 0, olderThanMs: WINDOW_MS });
    const [revived, dead] = [rig.userIds[0]!, rig.userIds[1]!];
    for (const userId of [revived, dead]) await rig.mark(userId, 'invalid_grant');
    const store = rig.space.store(revived);
    const held = (await store.get())!;
    expect(await store.set({ ...held, accessToken: 'at_saved_late', refreshToken: 'rt_saved_late' }, { expectedRefreshToken: held.refreshToken })).toBe(true);
    expect((await rig.space.grants({ status: 'needs_reconnect' })).grants.map((g) => g.userId)).toEqual([dead]);

    await rig.age(2 * WINDOW_MS);
    const oauth = new OAuthClient({ baseUrl: rig.fake.baseUrl, clientId: 'app_sweep', clientSecret: 'secret_sweep_1234', redirectUri: 'http://127.0.0.1/callback' });
    const users = new UserClients({ oauth, baseUrl: rig.fake.baseUrl, store: rig.space });
    // The revived grant is claimed (its refresh token is not the service's: refused, dead); the marked one is not.
    const swept = await users.keepGrantsAlive({ olderThanMs: WINDOW_MS });
    expect(swept).toEqual({ refreshed: 1, skipped: 0, dead: 1, failed: 0 });
    expect(rig.fake.stats.tokenRequests.refresh_token).toBe(2);
  });

  it('the signal stops the sweep: no grant is claimed after it aborts; the next run refreshes the rest', { timeout: 60_000 }, async () => {
    rig = await startSweepRig({ target: target(), users: 10, processes: 0, olderThanMs: WINDOW_MS });
    await rig.age(2 * WINDOW_MS);
    const controller = new AbortController();
    const oauth = new OAuthClient({ baseUrl: rig.fake.baseUrl, clientId: 'app_sweep', clientSecret: 'secret_sweep_1234', redirectUri: 'http://127.0.0.1/callback' });
    const users = new UserClients({ oauth, baseUrl: rig.fake.baseUrl, store: rig.space, onTokens: () => controller.abort() });

    const first = await users.keepGrantsAlive({ olderThanMs: WINDOW_MS, concurrency: 1, signal: controller.signal });
    expect(first).toEqual({ refreshed: 1, skipped: 0, dead: 0, failed: 0 });
    expect(rig.fake.stats.tokenRequests.refresh_token).toBe(1);

    const rest = await users.keepGrantsAlive({ olderThanMs: WINDOW_MS, concurrency: 3 });
    expect(rest).toEqual({ refreshed: 9, skipped: 0, dead: 0, failed: 0 });
    expect([...rig.requests().values()]).toEqual(rig.userIds.map(() => 1));
  });
});

describe('RedisTokenSpace.reindex', () => {
  let rig: SweepRig | undefined;
  afterEach(async () => {
    await rig?.stop();
    rig = undefined;
  });

  it('adds the users whose tokens were stored without the space: listed, then swept (their time unknown: due)', { timeout: 60_000 }, async () => {
    rig = await startSweepRig({ target: { kind: 'redis', url: redis.url }, users: 6, processes: 0, olderThanMs: WINDOW_MS });
    const client = new Redis(redis.url);
    try {
      // As stored by plain RedisTokenStores before the app moved to a space: tokens, no index.
      const prefix = (rig.space.toJSON() as { prefix: string }).prefix;
      await client.del(`${prefix}~grants{~}:users`, `${prefix}~grants{~}:refreshed`);
      expect((await rig.space.grants()).grants).toEqual([]);

      expect(await (rig.space as RedisTokenSpace).reindex()).toBe(6);
      expect((await rig.space.grants()).grants.map((g) => g.userId)).toEqual(rig.userIds);
      expect(await (rig.space as RedisTokenSpace).reindex()).toBe(0); // once each
      const oauth = new OAuthClient({ baseUrl: rig.fake.baseUrl, clientId: 'app_sweep', clientSecret: 'secret_sweep_1234', redirectUri: 'http://127.0.0.1/callback' });
      const users = new UserClients({ oauth, baseUrl: rig.fake.baseUrl, store: rig.space });
      expect(await users.keepGrantsAlive({ olderThanMs: WINDOW_MS })).toEqual({ refreshed: 6, skipped: 0, dead: 0, failed: 0 });
    } finally {
      client.disconnect();
    }
  });
});

it('bad options of grants() and keepGrantsAlive() are ValidationErrors naming the option', async () => {
  const space = new RedisTokenSpace({ redis: { call: async () => null }, encryptionKey: 'none' });
  await expect(space.grants({ status: 'gone' as 'connected' })).rejects.toThrow(/status/);
  await expect(space.grants({ limit: 0 })).rejects.toThrow(ValidationError);
  const users = new UserClients({ oauth: { refresh: async () => { throw new Error('unused'); } }, baseUrl: 'http://127.0.0.1:9', store: space });
  await expect(users.keepGrantsAlive({} as { olderThanMs: number })).rejects.toThrow(/olderThanMs/);
  await expect(users.keepGrantsAlive({ olderThanMs: 60_000, concurrency: 0 })).rejects.toThrow(/concurrency/);
  expect(() => space.store('a{b}')).toThrow(ValidationError);
});

it('keepGrantsAlive() without a table or space as `store` is a ValidationError naming the option', async () => {
  const users = new UserClients({ oauth: { refresh: async () => { throw new Error('unused'); } }, baseUrl: 'http://127.0.0.1:9', store: () => new MemoryTokenStore() });
  await expect(users.keepGrantsAlive({ olderThanMs: 60_000 })).rejects.toThrow(ValidationError);
  await expect(users.keepGrantsAlive({ olderThanMs: 60_000 })).rejects.toThrow(/PostgresTokenTable or a RedisTokenSpace/);
});

/** Overwrites a user's stored value with one no key decrypts. */
async function breakStoredValue(kind: 'postgres' | 'redis', url: string, rig: SweepRig, userId: string): Promise<void> {
  const store = rig.space.store(userId);
  if (kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: url });
    await pool.query(`UPDATE "${(rig.space.toJSON() as { table: string }).table}" SET tokens = 'not a token' WHERE key = $1`, [store.key]);
    await pool.end();
  } else {
    const client = new Redis(url);
    await client.set(store.key, 'not a token');
    client.disconnect();
  }
}

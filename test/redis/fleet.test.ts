/**
 * Issue 20: a fleet of 4 worker processes serving many users through one real redis-server, against a service that
 * rotates refresh tokens and revokes the whole grant when a rotated-out one comes back. Each test counts outcomes
 * (refreshes, rotated-out refresh tokens sent, users logged out, Redis commands), never time.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { commandsRun, type Fleet, resetCommandStats, startFleet } from './fleet/fleet-rig.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('a fleet of 4 processes on one Redis', () => {
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
  });

  it('500 users, every token expired, each process calls once per user: one refresh per user, no error, at most 16 Redis commands per user', { timeout: 120_000 }, async () => {
    fleet = await startFleet({ redis: { kind: 'ioredis', url: server.url }, users: 500 });
    await resetCommandStats(fleet.redis);

    const round = await fleet.round();

    expect(round).toEqual({ succeeded: 2_000, failures: {}, refreshesSent: 500, marked: 0, replacedSent: 0, refusedSent: 0 });
    expect(fleet.fake.stats.tokenRequests.refresh_token).toBe(500);
    const perUser = (await commandsRun(fleet.redis)) / 500;
    console.log(`Redis commands per user for a fleet refresh (4 processes, 500 users): ${perUser.toFixed(2)}`);
    expect(perUser).toBeLessThanOrEqual(16);
    expect(await fleet.loggedOut()).toBe(0);
  });

  it('8 users, the processes calling one after the other: at most 16 Redis commands per user (a refresh, then one GET per process)', { timeout: 60_000 }, async () => {
    fleet = await startFleet({ redis: { kind: 'ioredis', url: server.url }, users: 8 });
    await resetCommandStats(fleet.redis);

    const rounds = [];
    for (let worker = 0; worker < 4; worker++) rounds.push(await fleet.round({ concurrency: 8, workers: [worker] }));

    expect(rounds.map((r) => r.succeeded)).toEqual([8, 8, 8, 8]);
    expect(rounds.map((r) => r.refreshesSent)).toEqual([8, 0, 0, 0]);
    const perUser = (await commandsRun(fleet.redis)) / 8;
    console.log(`Redis commands per user for a fleet refresh (4 processes one after the other, 8 users): ${perUser.toFixed(2)}`);
    expect(perUser).toBeLessThanOrEqual(16);
  });
});

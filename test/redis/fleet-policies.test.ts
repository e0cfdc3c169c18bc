/**
 * Issue 39: every refresh-token policy × fault (none, answer lost after commit, answer after the client's time-out, a
 * process killed between answer and save), and a holder killed or frozen mid-refresh under each policy, with the
 * default lockTtlMs and a long one; across 4 processes on one Redis. See fleet/policy-matrix.ts and
 * fleet/holder-stopped.ts; and dead grants: they cost nothing and are
 * told once (fleet/dead-grants.ts).
 */
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import { type RedisServer, startRedisServer } from './redis-server.js';
import type { Fleet } from './fleet/fleet-rig.js';
import { holderStoppedMatrix } from './fleet/holder-stopped.js';
import { policyMatrix } from './fleet/policy-matrix.js';
import { deadGrants } from './fleet/dead-grants.js';

let server: RedisServer;
let fleet: Fleet | undefined;
beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});
afterAll(async () => {
  await server?.stop();
});

describe('every refresh-token policy × fault, 4 processes on Redis', () => {
  policyMatrix(() => ({ kind: 'ioredis', url: server.url }), (f) => (fleet = f), { commandTimeoutMs: 2_000, storeTimeoutMs: 2_500 });
  holderStoppedMatrix(() => ({ kind: 'ioredis', url: server.url }), (f) => (fleet = f), { commandTimeoutMs: 2_000, storeTimeoutMs: 2_500 });
});

describe('dead grants, 4 processes on Redis', () => {
  deadGrants(() => ({ kind: 'ioredis', url: server.url }), (f) => (fleet = f), false);
});

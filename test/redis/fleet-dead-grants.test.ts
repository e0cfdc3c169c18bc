/**
 * Issue 39: dead grants cost nothing and are told once, across 4 processes on one Redis. See fleet/dead-grants.ts.
 */
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import { type RedisServer, startRedisServer } from './redis-server.js';
import type { Fleet } from './fleet/fleet-rig.js';
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

describe('dead grants, 4 processes on Redis', () => {
  deadGrants(() => ({ kind: 'ioredis', url: server.url }), (f) => (fleet = f), false);
});

/**
 * Issue 39: dead grants cost nothing and are told once, across 4 processes on one PostgreSQL. See fleet/dead-grants.ts.
 */
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import { type PostgresServer, startPostgresServer } from './postgres-server.js';
import type { Fleet } from '../redis/fleet/fleet-rig.js';
import { deadGrants } from '../redis/fleet/dead-grants.js';

let server: PostgresServer;
let fleet: Fleet | undefined;
beforeAll(async () => {
  server = await startPostgresServer();
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});
afterAll(async () => {
  await server?.stop();
});

describe('dead grants, 4 processes on PostgreSQL', () => {
  deadGrants(() => ({ kind: 'postgres', url: server.url }), (f) => (fleet = f), true);
});

/**
 * Issue 39: every refresh-token policy × fault (none, answer lost after commit, answer after the client's time-out, a
 * process killed between answer and save), and a holder killed or frozen mid-refresh under each policy, with the
 * default lockTtlMs and a long one; across 4 processes on one PostgreSQL. See ../redis/fleet/policy-matrix.ts and
 * ../redis/fleet/holder-stopped.ts; and dead grants: they cost
 * nothing and are told once (../redis/fleet/dead-grants.ts).
 */
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import { type PostgresServer, startPostgresServer } from './postgres-server.js';
import type { Fleet } from '../redis/fleet/fleet-rig.js';
import { holderStoppedMatrix } from '../redis/fleet/holder-stopped.js';
import { policyMatrix } from '../redis/fleet/policy-matrix.js';
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

describe('every refresh-token policy × fault, 4 processes on PostgreSQL', () => {
  policyMatrix(() => ({ kind: 'postgres', url: server.url }), (f) => (fleet = f), { commandTimeoutMs: 4_000, storeTimeoutMs: 4_500 });
  holderStoppedMatrix(() => ({ kind: 'postgres', url: server.url }), (f) => (fleet = f), { commandTimeoutMs: 4_000, storeTimeoutMs: 4_500 });
});

describe('dead grants, 4 processes on PostgreSQL', () => {
  deadGrants(() => ({ kind: 'postgres', url: server.url }), (f) => (fleet = f), true);
});

/**
 * A fleet for the fault tests: `processes` worker processes (fleet-worker.ts), each with a TokenManager per user on a
 * RedisTokenStore (or a PostgresTokenStore: the `postgres` target), against one fake service that rotates refresh tokens and revokes the whole grant when a rotated-out
 * one comes back (`refreshTokenReuse: 'revoke-grant'`). The users signed in earlier; their access tokens have expired.
 */
import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { OAuthClient, ReauthorizationRequiredError, type StoredGrant, type TokenSet } from '@postsched/sdk';
import { createTokenTable, PostgresTokenStore } from '@postsched/sdk/postgres';
import { RedisTokenStore } from '@postsched/sdk/redis';
import pg from 'pg';
import { createFakeService, type FakeGrant, type FakeService, type RefreshPolicy } from '@postsched/sdk/testing';
import { startWorkerFile, type Worker } from '../multi-process/fleet.js';
import type { FleetWorkerCommand, FleetWorkerConfig, FleetWorkerMessage, PostgresTarget, RedisTarget, RoundResult, WorkerReport } from './fleet-worker.js';
import { TEST_KEY } from '../../support/token-key.js';

const WORKER = fileURLToPath(new URL('./fleet-worker.ts', import.meta.url));
const APP = { clientId: 'app_fleet', clientSecret: 'secret_fleet_1234', redirectUris: ['http://127.0.0.1/callback'] };

export type FleetWorker = Worker<FleetWorkerMessage, FleetWorkerCommand>;

export interface FleetOptions {
  /** Where the workers connect; a list gives each worker its own (in turn), e.g. ioredis and node-redis mixed. */
  redis: RedisTarget | RedisTarget[] | PostgresTarget;
  users: number;
  processes?: number;
  /** The stores' `lockTtlMs` (default 5 000); a list gives each user's own, `null`: the store's default. */
  lockTtlMs?: number | Array<number | null>;
  /** The fakes' clock: `'real'` for windows and lifetimes that run in real time (default: manual). */
  clock?: 'real';
  commandTimeoutMs?: number;
  /** The managers' `storeTimeoutMs` (default: TokenManager's). */
  storeTimeoutMs?: number | undefined;
  /** The workers' OAuthClient `timeoutMs` (default: its own, 30 s). */
  oauthTimeoutMs?: number | undefined;
  /**
   * The fake's refresh-token policy (default: rotation with reuse detection). A list makes one fake per policy, user
   * `i` on fake `i % list.length` (`fakes`).
   */
  refreshPolicy?: RefreshPolicy | RefreshPolicy[] | undefined;
  /** The managers' `refreshMarginMs` (default: TokenManager's). */
  refreshMarginMs?: number | undefined;
  /** The workers' managers are a `UserClients`' (see `FleetWorkerConfig.userClients`). */
  userClients?: FleetWorkerConfig['userClients'];
}

/** What a round of calls did, summed over the processes. */
export interface RoundTotals {
  succeeded: number;
  failures: Record<string, number>;
  refreshesSent: number;
  /** Dead grants marked in the store, each by the process whose compare-and-set it was. */
  marked: number;
  /** Refresh tokens sent by a process that had seen them replaced. */
  replacedSent: number;
  /** Refreshes the service refused: a refresh token already rotated out (by any process), or of a revoked grant. */
  refusedSent: number;
}

export interface Fleet {
  readonly fake: FakeService;
  /** One fake per refresh policy (`refreshPolicy` as a list), else `[fake]`. */
  readonly fakes: FakeService[];
  readonly workers: FleetWorker[];
  readonly keys: string[];
  /** A Redis client of the test's own (for FLUSHALL, SAVE, INFO); a Postgres fleet has none (`pool` instead). */
  readonly redis: Redis | Cluster;
  /** A node-postgres pool of the test's own, for a Postgres fleet. */
  readonly pool: pg.Pool | undefined;
  /** SQL statements the workers' stores ran so far, all processes together (a Postgres fleet). */
  statements(): Promise<number>;
  /**
   * One call per user (or per user of `only`) in every process (or in those of `workers`), each in its own shuffled
   * order, `concurrency` calls at a time: a `getAccessToken()`, or with `force` a `forceRefresh()` of the token it
   * got last (as after a 401).
   */
  round(options?: { force?: boolean; concurrency?: number; only?: number[]; workers?: number[]; api?: boolean }): Promise<RoundTotals>;
  /** What each process's `UserClients` told the app so far, and the `grantStatus` of `users` there. */
  reports(users: number[]): Promise<WorkerReport[]>;
  /** Users who must sign in again: no tokens stored, or the stored refresh token is refused (grant revoked). */
  loggedOut(only?: number[]): Promise<number>;
  /** Each user's grant, as the fake holds it now. */
  grants(): FakeGrant[];
  /** What the store holds for `user`, read by the test itself (`getGrant`). */
  stored(user: number): Promise<StoredGrant>;
  /** Revokes `user`'s grant at the service (RFC 7009, the fake's `/oauth/revoke`), with the stored refresh token. */
  revoke(user: number): Promise<void>;
  /** New tokens for `user`, as a sign-in gives (a grant of its own). */
  issue(user: number): TokenSet;
  stop(): Promise<void>;
}

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const processes = options.processes ?? 4;
  const policies = options.refreshPolicy === undefined ? [undefined] : [options.refreshPolicy].flat();
  const fakes = policies.map((policy) => createFakeService({ apps: [APP], ...(options.clock === undefined ? {} : { clock: options.clock }), ...(policy === undefined ? { refreshTokenReuse: 'revoke-grant' } : { refreshPolicy: policy }) }));
  const fake = fakes[0]!;
  const urls = await Promise.all(fakes.map(async (f) => (await f.listen()).url));
  const baseUrl = urls[0]!;
  const fakeOf = (user: number) => fakes[user % fakes.length]!;
  const run = crypto.randomUUID().slice(0, 8);
  const keys = Array.from({ length: options.users }, (_, i) => `postsched:fleet:{${run}_${i}}`);
  const targets = Array.isArray(options.redis) ? options.redis : [options.redis];
  const own = targets[0]!;
  let redis: Redis | Cluster | undefined;
  let pool: pg.Pool | undefined;
  let store: (key: string) => RedisTokenStore | PostgresTokenStore;
  if (own.kind === 'postgres') {
    const p = (pool = new pg.Pool({ connectionString: own.url }));
    p.on('error', () => {}); // a connection ended while a test restarts the server
    await createTokenTable(p);
    store = (key) => new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: p, key });
  } else {
    const r = (redis = 'nodes' in own ? new Cluster(own.nodes) : new Redis(own.url));
    r.on('error', () => {}); // reconnect noise while a test restarts the server
    store = (key) => new RedisTokenStore({ encryptionKey: TEST_KEY, redis: r, key });
  }
  const issued: string[] = [];
  for (const [user, key] of keys.entries()) {
    const tokens = fakeOf(user).issueTokenSet({ clientId: APP.clientId });
    issued.push(tokens.refreshToken!);
    await store(key).set({ ...tokens, expiresAt: Date.now() - 1_000 });
  }

  const config = (index: number): FleetWorkerConfig => ({
    redis: targets[index % targets.length]!,
    keys,
    baseUrl,
    ...(fakes.length > 1 ? { baseUrls: keys.map((_, user) => urls[user % urls.length]!) } : {}),
    clientId: APP.clientId,
    clientSecret: APP.clientSecret,
    lockTtlMs: options.lockTtlMs ?? 5_000,
    commandTimeoutMs: options.commandTimeoutMs ?? 3_000,
    ...(options.storeTimeoutMs === undefined ? {} : { storeTimeoutMs: options.storeTimeoutMs }),
    ...(options.oauthTimeoutMs === undefined ? {} : { oauthTimeoutMs: options.oauthTimeoutMs }),
    ...(options.refreshMarginMs === undefined ? {} : { refreshMarginMs: options.refreshMarginMs }),
    ...(options.userClients === undefined ? {} : { userClients: options.userClients }),
  });
  const workers = Array.from({ length: processes }, (_, i) => startWorkerFile<FleetWorkerMessage, FleetWorkerCommand>(WORKER, config(i)));
  await Promise.all(workers.map((w) => w.next('ready')));
  const oauth = urls.map((url) => new OAuthClient({ baseUrl: url, clientId: APP.clientId, clientSecret: APP.clientSecret, redirectUri: APP.redirectUris[0]!, revocationEndpoint: '/oauth/revoke' }));

  return {
    fake,
    fakes,
    workers,
    keys,
    get redis(): Redis | Cluster {
      if (redis === undefined) throw new Error('a Postgres fleet has no Redis client: use `pool`');
      return redis;
    },
    pool,
    async statements() {
      const counts = await Promise.all(
        workers.map((w) => {
          w.send({ type: 'stats' });
          return w.next('stats');
        }),
      );
      return counts.reduce((sum, c) => sum + c.statements, 0);
    },
    async reports(users) {
      return Promise.all(
        workers.map((w) => {
          w.send({ type: 'report', users });
          return w.next('report');
        }),
      );
    },
    async round({ force = false, concurrency = 25, only, workers: which, api = false } = {}) {
      const users = only ?? keys.map((_, i) => i);
      const results = await Promise.all(
        (which === undefined ? workers : which.map((i) => workers[i]!)).map((w) => {
          w.send({ type: 'round', users: shuffle(users), concurrency, force, api });
          return w.next('round-done');
        }),
      );
      return total(...results);
    },
    async loggedOut(only = keys.map((_, i) => i)) {
      let count = 0;
      for (const user of only) {
        const tokens = await store(keys[user]!).get();
        // A refresh with what the store holds: refused (reused, or its grant revoked) means the user must sign in again.
        const refused = tokens === undefined || (await oauth[user % oauth.length]!.refresh(tokens).then(() => false, (e: unknown) => e instanceof ReauthorizationRequiredError));
        if (refused) count++;
      }
      return count;
    },
    grants: () => issued.map((rt, user) => fakeOf(user).grantOf(rt)!),
    stored: (user) => store(keys[user]!).getGrant(),
    async revoke(user) {
      const { tokens } = await store(keys[user]!).getGrant();
      await oauth[user % oauth.length]!.revoke(tokens!);
    },
    issue: (user) => fakeOf(user).issueTokenSet({ clientId: APP.clientId }),
    async stop() {
      await Promise.all(workers.map((w) => w.stop()));
      redis?.disconnect();
      await pool?.end();
      await Promise.all(fakes.map((f) => f.close()));
    },
  };
}

/** Resolves once the fake has answered `count` refreshes (polled: the fleet runs in other processes). */
export async function refreshesReach(f: Fleet, count: number): Promise<void> {
  while (f.fake.stats.tokenRequests.refresh_token < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Commands Redis ran since `CONFIG RESETSTAT`, from `INFO commandstats` (commands inside a script count). */
export async function commandsRun(redis: Redis | Cluster): Promise<number> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  let total = 0;
  for (const node of nodes) {
    const info = String(await node.call('INFO', 'commandstats'));
    for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      // The connection handshakes of the clients and this count itself are not the store's.
      if (!['info', 'config', 'client', 'hello', 'ping', 'select', 'cluster', 'command', 'readonly'].includes(name!.split('|')[0]!)) total += Number(calls);
    }
  }
  return total;
}

export async function resetCommandStats(redis: Redis | Cluster): Promise<void> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  await Promise.all(nodes.map((node) => node.call('CONFIG', 'RESETSTAT')));
}

/** Adds up rounds (of one process each, or already summed). */
export function total(...results: Array<RoundResult | RoundTotals>): RoundTotals {
  const totals: RoundTotals = { succeeded: 0, failures: {}, refreshesSent: 0, marked: 0, replacedSent: 0, refusedSent: 0 };
  for (const r of results) {
    totals.succeeded += r.succeeded;
    totals.refreshesSent += r.refreshesSent;
    totals.marked += r.marked;
    totals.replacedSent += r.replacedSent;
    totals.refusedSent += r.refusedSent;
    for (const [name, n] of Object.entries(r.failures)) totals.failures[name] = (totals.failures[name] ?? 0) + n;
  }
  return totals;
}

function shuffle<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/** What `stallHoldersSave` counted. */
export interface StalledSave {
  /** The round of the process whose save stalled (its call fails past its `storeTimeoutMs`). */
  holder: RoundTotals;
  /** The rounds of the other processes, which asked for user 0's tokens while the save was stalled. */
  others: RoundTotals;
  /** The others that were waiting for the lock when the save was let through (the others' calls that were not over). */
  waited: number;
  /** A round of every process after the save was let through. */
  after: RoundTotals;
}

/** Process 0 refreshes user 0 (a 401) and its save of the answer stalls: its call fails past `storeTimeoutMs`. */
export async function refreshAndStall(f: Fleet): Promise<RoundTotals> {
  const holder = f.workers[0]!;
  holder.send({ type: 'stall-saves' });
  holder.send({ type: 'round', users: [0], concurrency: 1, force: true });
  return total(await holder.next('round-done'));
}

/**
 * User 0's token is refused (a 401) in process 0, which refreshes it (the service rotates its refresh token) and whose
 * save of the answer then stalls, unanswered, past the manager's `storeTimeoutMs`: process 0's call fails. Only then
 * do the other processes get a 401 for user 0; once each of them is waiting for the lock (or its call is over), the
 * stalled save is let through (it lands), and every process makes a call for user 0 once more.
 */
export async function stallHoldersSave(f: Fleet): Promise<StalledSave> {
  const [holder, ...others] = f.workers;
  const held = await refreshAndStall(f);
  const done = others.map((w) => {
    w.send({ type: 'round', users: [0], concurrency: 1, force: true, tell: true });
    return w.next('round-done');
  });
  let waited = 0;
  await Promise.all(
    others.map((w, i) => {
      const waiting = w.next('waiting').then(() => waited++);
      waiting.catch(() => {}); // never sent when the call is over first: rejected when the worker stops
      return Promise.race([waiting, done[i]]);
    }),
  );
  holder!.send({ type: 'unstall' });
  const rounds = await Promise.all(done);
  const after = await f.round({ force: true, only: [0] });
  return { holder: held, others: total(...rounds), waited, after };
}

/** The lease of user 0's lock as the store keeps it: its owner, and the store's own clock (ms). */
export interface LeaseView {
  owner(): Promise<string | null>;
  now(): Promise<number>;
}

/** What `starveHolderMidRefresh` counted. */
export interface StarvedHolder {
  /** Whether the stopped holder's lease was lost (taken over, or expired) before it ran again. */
  lost: boolean;
  /** The rounds of every process for user 0, and one more call for user 0 in each. */
  all: RoundTotals;
  after: RoundTotals;
}

/**
 * Process 0 refreshes user 0 (a 401): the service rotates its refresh token, and before the answer is saved the
 * process is stopped (SIGSTOP: a process starved of CPU, its event loop not running, so its lease is not extended).
 * The other processes then get a 401 for user 0 and wait for the lock. The holder stays stopped until its lease is no
 * longer its own, or until the store's clock is a second past `stopMs`; when the lease was lost, the others' calls are
 * let finish first. Then the holder runs again, and every process makes one more call for user 0.
 */
export async function starveHolderMidRefresh(f: Fleet, lease: LeaseView, stopMs: number): Promise<StarvedHolder> {
  const [holder, ...others] = f.workers;
  holder!.send({ type: 'pause-next-refresh' });
  holder!.send({ type: 'round', users: [0], concurrency: 1, force: true, tell: true });
  await holder!.next('refreshed'); // the service rotated user 0's refresh token; the answer is not saved yet
  const owner = await lease.owner();
  if (owner === null) throw new Error('the holder holds no lease while it refreshes');
  holder!.child.kill('SIGSTOP');
  const stoppedAt = await lease.now();
  for (const w of others) w.send({ type: 'round', users: [0], concurrency: 1, force: true, tell: true });
  await Promise.all(others.map((w) => w.next('waiting')));
  const waited = others.map((w) => w.next('round-done'));
  let lost = false;
  while (!lost && (await lease.now()) < stoppedAt + stopMs + 1_000) {
    lost = (await lease.owner()) !== owner;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const othersFirst = lost ? await Promise.all(waited) : undefined; // they took the lock over: let them refresh first
  holder!.child.kill('SIGCONT');
  holder!.send({ type: 'continue' });
  const rounds = [await holder!.next('round-done'), ...(othersFirst ?? (await Promise.all(waited)))];
  const after = await f.round({ force: true, only: [0] });
  return { lost, all: total(...rounds, after), after };
}

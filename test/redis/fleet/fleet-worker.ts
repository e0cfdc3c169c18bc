/**
 * One worker process of a fleet (forked through tsx by fleet-rig.ts): a TokenManager on a RedisTokenStore (or a
 * PostgresTokenStore: the `postgres` target) per user,
 * as an app serving many users keeps them, against the fake service, driven over IPC a round at a time.
 *
 * Config (env WORKER_CONFIG, JSON): `FleetWorkerConfig`. In: `round` (one call per listed user), `pause-next-refresh`
 * (hold the answer of the next refresh until `continue`), `continue`, `stall-saves` (every save of refreshed tokens
 * waits, unanswered, until `unstall`, then runs: a statement stuck in an overloaded store), `unstall`, `exit`. Out: `ready`, `round-done`, `refreshed`
 * (the held refresh answered, not saved yet), `stats` (on `stats`: the SQL statements this process ran, Postgres) and,
 * during a round sent with `tell`, `waiting` (a call waits for another
 * process's refresh: the store's lock is taken) and `save-failed` (a save of refreshed tokens failed).
 */
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { type GrantStatus, OAuthClient, ReauthorizationRequiredError, TokenManager, type TokenSet, type TokenStore, UserClients } from '@postsched/sdk';
import { PostgresTokenStore } from '@postsched/sdk/postgres';
import { type RedisClientLike, RedisTokenStore } from '@postsched/sdk/redis';
import pg from 'pg';
import { TEST_KEY } from '../../support/token-key.js';

export type RedisTarget =
  | { kind: 'ioredis' | 'node-redis'; url: string }
  | { kind: 'ioredis-cluster' | 'node-redis-cluster'; nodes: Array<{ host: string; port: number }> };

/** A PostgreSQL server instead of Redis: each process has a node-postgres pool of `poolSize` connections (pg's 10). */
export interface PostgresTarget {
  kind: 'postgres';
  url: string;
  poolSize?: number;
}

export interface FleetWorkerConfig {
  redis: RedisTarget | PostgresTarget;
  /** The Redis key (the Postgres row's key) of each user's tokens. */
  keys: string[];
  baseUrl: string;
  /** Each user's service, when they differ (one fake per refresh policy): one OAuthClient per service. */
  baseUrls?: string[];
  clientId: string;
  clientSecret: string;
  /** The stores' `lockTtlMs`; a list gives each user's own (`null`: the store's default). */
  lockTtlMs: number | Array<number | null>;
  commandTimeoutMs: number;
  /** The managers' `storeTimeoutMs` (default: TokenManager's). */
  storeTimeoutMs?: number;
  /** OAuthClient's `timeoutMs` (default: its own). */
  oauthTimeoutMs?: number;
  /** The managers' `refreshMarginMs` (default: TokenManager's). */
  refreshMarginMs?: number;
  /**
   * The managers are a `UserClients`' (user `i` is `u${i}`, on `baseUrl`), which counts its `onReauthorizationRequired`
   * and `onReconnected` calls; `api` rounds and `status`, `connect` and `disconnect` need it. A revocation endpoint
   * (`revocationEndpoint`) for `disconnect`, if given.
   */
  userClients?: { revocationEndpoint?: string };
}

export interface RoundResult {
  type: 'round-done';
  succeeded: number;
  /** Failed calls by error name (and reason, for ReauthorizationRequiredError). */
  failures: Record<string, number>;
  /** Refresh requests this process sent. */
  refreshesSent: number;
  /** Dead grants this process marked in the store (the mark's compare-and-set was its own). */
  marked: number;
  /** Refresh requests with a refresh token this process had itself seen replaced (by its own earlier refresh). */
  replacedSent: number;
  /**
   * Refresh requests the service refused (`invalid_grant`): a refresh token already rotated out (by any process) was
   * sent, or its grant was revoked for that.
   */
  refusedSent: number;
}

/** What a `UserClients` worker told the app and holds (`report`). */
export interface WorkerReport {
  type: 'report';
  /** `onReauthorizationRequired` calls: user index → the reasons. */
  reauthorizationRequired: Record<number, string[]>;
  /** `onReconnected` calls: user index → how many. */
  reconnected: Record<number, number>;
  /** `grantStatus` of each user asked for. */
  status: Record<number, GrantStatus>;
}

export type FleetWorkerMessage = { type: 'ready' | 'refreshed' | 'waiting' | 'save-failed' | 'done' } | RoundResult | { type: 'stats'; statements: number } | WorkerReport;

export type FleetWorkerCommand =
  | { type: 'round'; users: number[]; concurrency: number; force: boolean; tell?: boolean; api?: boolean }
  | { type: 'report'; users: number[] }
  | { type: 'connect'; user: number; tokens: TokenSet }
  | { type: 'disconnect'; user: number }
  | { type: 'pause-next-refresh'; count?: number }
  | { type: 'continue' | 'stall-saves' | 'unstall' | 'exit' | 'stats' };

const config = JSON.parse(process.env['WORKER_CONFIG'] ?? '{}') as FleetWorkerConfig;
const send = (message: FleetWorkerMessage) => process.send?.(message);

/** SQL statements this process's stores ran (Postgres target). */
let statements = 0;

async function connect(target: RedisTarget | PostgresTarget): Promise<{ redis: RedisClientLike | pg.Pool; close: () => void }> {
  switch (target.kind) {
    case 'postgres': {
      const pool = new pg.Pool({ connectionString: target.url, max: target.poolSize ?? 10 });
      pool.on('error', () => {}); // an idle connection ended by a restart of the server
      const query = pool.query.bind(pool) as (config: unknown) => Promise<unknown>;
      Object.assign(pool, { query: (config: unknown) => (statements++, query(config)) });
      return { redis: pool, close: () => void pool.end() };
    }
    case 'ioredis': {
      const redis = new Redis(target.url);
      redis.on('error', () => {}); // reconnect noise while a test restarts the server
      return { redis, close: () => redis.disconnect() };
    }
    case 'ioredis-cluster': {
      const redis = new Cluster(target.nodes);
      redis.on('error', () => {});
      return { redis, close: () => redis.disconnect() };
    }
    case 'node-redis': {
      const redis = createClient({ url: target.url });
      redis.on('error', () => {});
      await redis.connect();
      return { redis, close: () => redis.destroy() };
    }
    case 'node-redis-cluster': {
      const redis = createCluster({ rootNodes: target.nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
      redis.on('error', () => {});
      await redis.connect();
      return { redis, close: () => redis.destroy() };
    }
  }
}

const { redis, close } = await connect(config.redis);
const oauthOf = (baseUrl: string) =>
  new OAuthClient({
    baseUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri: 'http://127.0.0.1/callback',
    ...(config.oauthTimeoutMs === undefined ? {} : { timeoutMs: config.oauthTimeoutMs }),
    ...(config.userClients?.revocationEndpoint === undefined ? {} : { revocationEndpoint: config.userClients.revocationEndpoint }),
  });

const seenReplaced = new Set<string>();
let refreshesSent = 0;
let replacedSent = 0;
let refusedSent = 0;
/** Refreshes whose answer is held until `continue` (`pause-next-refresh`). */
let pause = 0;
/** While saves stall: resolves on `unstall`. */
let stalled: Promise<void> | undefined;
let unstall: (() => void) | undefined;
let telling = false;
let release: (() => void) | undefined;
let released = new Promise<void>((resolve) => (release = resolve));
// Shared by every manager of the process (of one service), as one OAuthClient of an app is: counts what leaves.
const refresherOf = (oauth: OAuthClient) => ({
  revoke: (tokens: TokenSet) => oauth.revoke(tokens),
  async refresh(previous: TokenSet): Promise<TokenSet> {
    refreshesSent++;
    if (seenReplaced.has(previous.refreshToken ?? '')) replacedSent++;
    const fresh = await oauth.refresh(previous).catch((error: unknown) => {
      if (error instanceof ReauthorizationRequiredError) refusedSent++;
      throw error;
    });
    if (previous.refreshToken !== undefined) seenReplaced.add(previous.refreshToken);
    if (pause > 0) {
      pause--;
      send({ type: 'refreshed' });
      await released;
    }
    return fresh;
  },
});
const refreshers = new Map<string, ReturnType<typeof refresherOf>>();
const refresherFor = (baseUrl: string) => refreshers.get(baseUrl) ?? refreshers.set(baseUrl, refresherOf(oauthOf(baseUrl))).get(baseUrl)!;

/** The store as the manager sees it, telling the test when a call waits for another process and when a save fails. */
function storeFor(key: string, user: number): TokenStore {
  const ttl = Array.isArray(config.lockTtlMs) ? config.lockTtlMs[user] : config.lockTtlMs;
  const lockTtlMs = ttl === null || ttl === undefined ? {} : { lockTtlMs: ttl };
  const store =
    redis instanceof pg.Pool
      ? new PostgresTokenStore({ encryptionKey: TEST_KEY, pool: redis, key, ...lockTtlMs, lockWaitMs: 30_000, statementTimeoutMs: config.commandTimeoutMs })
      : new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key, ...lockTtlMs, lockWaitMs: 30_000, commandTimeoutMs: config.commandTimeoutMs });
  return {
    get: () => store.get(),
    getGrant: () => store.getGrant(),
    markReauthorizationRequired: (reason, refused) => store.markReauthorizationRequired(reason, refused),
    delete: () => store.delete(),
    lock: (fn, options) => {
      let told = false;
      const whileWaiting = options?.whileWaiting;
      return store.lock(fn, {
        ...options,
        whileWaiting: (stored) => {
          if (!told && telling) send({ type: 'waiting' });
          told = true;
          return whileWaiting?.(stored);
        },
      });
    },
    set: async (tokens, options) => {
      if (options?.expectedRefreshToken !== undefined) await stalled;
      return store.set(tokens, options).catch((error: unknown) => {
        if (options?.expectedRefreshToken !== undefined && telling) send({ type: 'save-failed' });
        throw error;
      });
    },
  };
}

let marked = 0;
const managerOptions = { ...(config.storeTimeoutMs === undefined ? {} : { storeTimeoutMs: config.storeTimeoutMs }), ...(config.refreshMarginMs === undefined ? {} : { refreshMarginMs: config.refreshMarginMs }) };
const told: Omit<WorkerReport, 'type' | 'status'> = { reauthorizationRequired: {}, reconnected: {} };
const userIndex = (userId: string) => Number(userId.slice(1));
const users =
  config.userClients === undefined
    ? undefined
    : new UserClients({
        oauth: refresherFor(config.baseUrl),
        baseUrl: config.baseUrl,
        store: (userId) => storeFor(config.keys[userIndex(userId)]!, userIndex(userId)),
        managerOptions,
        clientOptions: { maxRetries: 0 },
        onReauthorizationRequired: (userId, error) => void (told.reauthorizationRequired[userIndex(userId)] ??= []).push(error.reason),
        onReconnected: (userId) => void (told.reconnected[userIndex(userId)] = (told.reconnected[userIndex(userId)] ?? 0) + 1),
      });
const managers = config.keys.map((key, i) =>
  users !== undefined
    ? users.manager(`u${i}`)
    : new TokenManager({ oauth: refresherFor(config.baseUrls?.[i] ?? config.baseUrl), store: storeFor(key, i), ...managerOptions, onMarked: () => marked++ }),
);
const lastToken: Array<string | undefined> = managers.map(() => undefined);

async function round(list: number[], concurrency: number, force: boolean, api: boolean): Promise<RoundResult> {
  const result: RoundResult = { type: 'round-done', succeeded: 0, failures: {}, refreshesSent: 0, marked: 0, replacedSent: 0, refusedSent: 0 };
  const before = { refreshesSent, replacedSent, refusedSent, marked };
  let next = 0;
  const lane = async () => {
    while (next < list.length) {
      const user = list[next++]!;
      const manager = managers[user]!;
      const last = lastToken[user];
      try {
        if (api) await users!.client(`u${user}`).accounts.list().toArray();
        else lastToken[user] = await (force && last !== undefined ? manager.forceRefresh(last) : manager.getAccessToken());
        result.succeeded++;
      } catch (error) {
        const name = error instanceof ReauthorizationRequiredError ? `${error.name}:${error.reason}` : error instanceof Error ? error.name : typeof error;
        result.failures[name] = (result.failures[name] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  result.refreshesSent = refreshesSent - before.refreshesSent;
  result.replacedSent = replacedSent - before.replacedSent;
  result.refusedSent = refusedSent - before.refusedSent;
  result.marked = marked - before.marked;
  return result;
}

process.on('message', (message: FleetWorkerCommand) => {
  if (message.type === 'exit') {
    close();
    process.exit(0);
  }
  if (message.type === 'continue') {
    release?.();
    released = new Promise<void>((resolve) => (release = resolve));
  }
  if (message.type === 'pause-next-refresh') pause = message.count ?? 1;
  if (message.type === 'stall-saves') stalled ??= new Promise<void>((resolve) => (unstall = resolve));
  if (message.type === 'unstall') {
    unstall?.();
    stalled = undefined;
  }
  if (message.type === 'stats') send({ type: 'stats', statements });
  if (message.type === 'round') {
    telling = message.tell === true;
    void round(message.users, message.concurrency, message.force, message.api === true).then(send);
  }
  if (message.type === 'report') {
    void Promise.all(message.users.map(async (user) => [user, await users!.grantStatus(`u${user}`)] as const)).then((statuses) =>
      send({ type: 'report', ...structuredClone(told), status: Object.fromEntries(statuses) }),
    );
  }
  if (message.type === 'connect') void users!.connect(`u${message.user}`, message.tokens).then(() => send({ type: 'done' }));
  if (message.type === 'disconnect') void users!.disconnect(`u${message.user}`).then(() => send({ type: 'done' }));
});
send({ type: 'ready' });

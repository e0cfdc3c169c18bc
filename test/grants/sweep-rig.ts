/**
 * Idle grants for the sweep tests and the grants bench: `users` users connected through a `PostgresTokenTable` or a
 * `RedisTokenSpace` (a fresh table or prefix each time) with tokens the fake service issued, and `processes` sweep
 * workers (sweep-worker.ts) over them.
 */
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createTokenTable, PostgresTokenTable, type PostgresTokenStore } from '@postsched/sdk/postgres';
import { RedisTokenSpace, type RedisTokenStore } from '@postsched/sdk/redis';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import type { ReauthorizationReason, TokenSet } from '@postsched/sdk';
import { startWorkerFile, type Worker } from '../redis/multi-process/fleet.js';
import { TEST_KEY } from '../support/token-key.js';
import type { SweepWorkerCommand, SweepWorkerConfig, SweepWorkerMessage } from './sweep-worker.js';

const WORKER = fileURLToPath(new URL('./sweep-worker.ts', import.meta.url));
const APP = { clientId: 'app_sweep', clientSecret: 'secret_sweep_1234', redirectUris: ['http://127.0.0.1/callback'] };

export interface SweepRig {
  readonly fake: FakeService;
  readonly space: PostgresTokenTable | RedisTokenSpace;
  readonly userIds: string[];
  /** Each user's first refresh token: `fake.grantOf` of it counts the grant's token requests, whatever rotated since. */
  readonly issued: Map<string, string>;
  readonly workers: Array<Worker<SweepWorkerMessage, SweepWorkerCommand>>;
  /** Makes every grant (or those listed) look last refreshed `agoMs` ago. */
  age(agoMs: number, only?: string[]): Promise<void>;
  /** Marks a grant as needing reconnection, as the store's mark does. */
  mark(userId: string, reason: string): Promise<void>;
  /** Token requests the fake answered for each user's grant. */
  requests(): Map<string, number>;
  stop(): Promise<void>;
}

export interface SweepRigOptions {
  target: { kind: 'postgres' | 'redis'; url: string };
  users: number;
  processes: number;
  olderThanMs: number;
  concurrency?: number;
  /** Users whose stored tokens carry a refresh token the fake never issued: refused (`invalid_grant`). */
  refused?: number[];
}

export async function startSweepRig(options: SweepRigOptions): Promise<SweepRig> {
  const fake = createFakeService({ apps: [APP] });
  const { url: baseUrl } = await fake.listen();
  const run = crypto.randomUUID().slice(0, 8);
  const name = options.target.kind === 'postgres' ? `sweep_${run}` : `sweep:${run}:`;
  let pool: pg.Pool | undefined;
  let redis: Redis | undefined;
  let space: PostgresTokenTable | RedisTokenSpace;
  if (options.target.kind === 'postgres') {
    pool = new pg.Pool({ connectionString: options.target.url, max: 8 });
    pool.on('error', () => {});
    await createTokenTable(pool, { table: name });
    space = new PostgresTokenTable({ pool, table: name, encryptionKey: TEST_KEY, statementTimeoutMs: 20_000, lockTtlMs: 120_000 });
  } else {
    redis = new Redis(options.target.url);
    redis.on('error', () => {});
    space = new RedisTokenSpace({ redis, prefix: name, encryptionKey: TEST_KEY, commandTimeoutMs: 20_000, lockTtlMs: 120_000 });
  }
  const userIds = Array.from({ length: options.users }, (_, i) => `user_${String(i).padStart(6, '0')}`);
  const issued = new Map<string, string>();
  const refused = new Set(options.refused ?? []);
  for (let i = 0; i < userIds.length; i += 200) {
    await Promise.all(
      userIds.slice(i, i + 200).map(async (userId, j) => {
        const tokens: TokenSet = { ...fake.issueTokenSet({ clientId: APP.clientId }), userId };
        if (refused.has(i + j)) tokens.refreshToken = `rt_never_issued_${userId}`;
        issued.set(userId, tokens.refreshToken!);
        await space.store(userId).set(tokens);
      }),
    );
  }
  const config: SweepWorkerConfig = {
    target: options.target, space: name, baseUrl, clientId: APP.clientId, clientSecret: APP.clientSecret,
    olderThanMs: options.olderThanMs, concurrency: options.concurrency ?? 8,
  };
  const workers = Array.from({ length: options.processes }, () => startWorkerFile<SweepWorkerMessage, SweepWorkerCommand>(WORKER, config));
  await Promise.all(workers.map((w) => w.next('ready')));
  return {
    fake, space, userIds, issued, workers,
    async age(agoMs, only = userIds) {
      if (pool !== undefined) {
        await pool.query(`UPDATE "${name}" SET refreshed_at = now() - $1::integer * interval '1 millisecond' WHERE key = ANY($2)`, [agoMs, only]);
      } else {
        const at = Date.now() - agoMs;
        for (let i = 0; i < only.length; i += 1000) await redis!.zadd(`${name}~grants{~}:refreshed`, ...only.slice(i, i + 1000).flatMap((u) => [at, u]));
      }
    },
    async mark(userId, reason) {
      // The store's own mark, as a refresh refused by the service leaves it (Postgres `needs_reconnect_*`, Redis
      // `${key}:reconnect` naming the stored value).
      const store = space.store(userId) as RedisTokenStore | PostgresTokenStore;
      const tokens = await store.get();
      if (tokens === undefined || !(await store.markReauthorizationRequired(reason as ReauthorizationReason, tokens))) throw new Error(`could not mark ${userId}`);
    },
    requests: () => new Map(userIds.map((u) => [u, fake.grantOf(issued.get(u)!)?.tokenRequests ?? 0])),
    async stop() {
      await Promise.all(workers.map((w) => w.stop()));
      await pool?.end();
      redis?.disconnect();
      await fake.close();
    },
  };
}

/** One `keepGrantsAlive` in every worker at once; the counts of each. */
export async function sweepAll(rig: SweepRig): Promise<Array<Extract<SweepWorkerMessage, { type: 'swept' }>>> {
  return Promise.all(
    rig.workers.map((w) => {
      w.send({ type: 'sweep' });
      return w.next('swept');
    }),
  );
}

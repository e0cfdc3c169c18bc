/**
 * `tokenStoreConformance` (issue 29, part 3) run against every store the SDK ships (memory, Redis, Redis Cluster,
 * Postgres) and examples/file-token-store.ts, each against a real server started here; and against two broken stores
 * (one ignores `expectedRefreshToken`, one whose lock does not exclude), which must fail the checks that concern them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryTokenStore, type TokenSet, type TokenStore, type TokenStoreSetOptions } from '@postsched/sdk';
import { createTokenTable, PostgresTokenStore } from '@postsched/sdk/postgres';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { tokenStoreConformance, type TokenStoreConformanceOptions } from '@postsched/sdk/testing';
import { FileTokenStore } from '../../examples/file-token-store.js';
import { type PostgresServer, startPostgresServer } from '../postgres/postgres-server.js';
import { type RedisCluster, type RedisServer, startRedisCluster, startRedisServer } from '../redis/redis-server.js';
import { TEST_KEY } from '../support/token-key.js';

const LOCK_TTL_MS = 1_000;

/** One store per key, kept: what a store that lives in its object (one process) gives. */
function perKey<S extends TokenStore>(make: (key: string) => S): (key: string) => S {
  const stores = new Map<string, S>();
  return (key) => {
    let store = stores.get(key);
    if (store === undefined) stores.set(key, (store = make(key)));
    return store;
  };
}

/**
 * examples/file-token-store.ts writes the key into a file name, where a lone surrogate becomes U+FFFD: it relies on
 * `UserClients`, which refuses such a user id before it calls `store(userId)`. So does its `makeStore` here.
 */
function asUserClientsCalls<S>(make: (key: string) => S): (key: string) => S {
  return (key) => {
    if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(key)) throw new Error('refused as UserClients refuses it');
    return make(key);
  };
}

/** Registers the kit's checks as tests. */
function conformance(options: () => TokenStoreConformanceOptions): void {
  // The checks' names do not depend on the options' values, only on which are given: list them from a stand-in.
  const probe = options();
  for (const [index, check] of tokenStoreConformance(probe).entries()) {
    it(check.name, { timeout: 60_000 }, () => tokenStoreConformance(options())[index]!.run());
  }
}

describe('MemoryTokenStore', () => {
  conformance(() => ({ makeStore: perKey(() => new MemoryTokenStore()) }));
});

describe('examples/file-token-store.ts: FileTokenStore', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postsched-conformance-'));
  });
  afterAll(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });
  conformance(() => ({
    makeStore: asUserClientsCalls(perKey((key) => new FileTokenStore(join(dir, `${key}.json`)))),
    corrupt: (key) => writeFile(join(dir, `${key}.json`), '{"accessToken": "at_half'),
  }));
});

describe.each([
  { name: 'RedisTokenStore', start: async () => ({ server: await startRedisServer(), cluster: false }) },
  { name: 'RedisTokenStore on a Redis Cluster (3 masters)', start: async () => ({ server: await startRedisCluster(3), cluster: true }) },
])('$name', ({ start }) => {
  let server: RedisServer | RedisCluster | undefined;
  let redis: Redis | Cluster | undefined;
  beforeAll(async () => {
    const started = await start();
    server = started.server;
    redis = started.cluster ? new Cluster((server as RedisCluster).nodes) : new Redis((server as RedisServer).url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });
  const redisKey = (key: string) => `postsched:conformance:{${key}}`;
  conformance(() => ({
    makeStore: (key) => new RedisTokenStore({ encryptionKey: TEST_KEY, redis: redis!, key: redisKey(key), lockTtlMs: LOCK_TTL_MS }),
    corrupt: async (key) => void (await redis!.set(redisKey(key), '{"accessToken":1}')),
    lockTtlMs: LOCK_TTL_MS,
  }));
});

/** docs/tokens.md "Your own store": the ~20-line store over a SQL table, as the page shows it. */
class SqlTokenStore implements TokenStore {
  constructor(
    private db: pg.Pool,
    private userId: string,
  ) {
    encodeURIComponent(userId); // throws on a lone surrogate, which UTF-8 turns into U+FFFD: two users, one row
  }

  async get(): Promise<TokenSet | undefined> {
    const { rows } = await this.db.query('SELECT tokens FROM user_tokens WHERE user_id = $1', [this.userId]);
    return rows[0] && JSON.parse(rows[0].tokens);
  }

  async set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<boolean> {
    // One statement: written when nothing is stored, or the stored refresh token is the expected one (or these tokens).
    const { rowCount } = await this.db.query(
      `INSERT INTO user_tokens (user_id, tokens) VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET tokens = $2
       WHERE $3::text IS NULL OR user_tokens.tokens::json->>'refreshToken' IN ($3, $4)`,
      [this.userId, JSON.stringify(tokens), options?.expectedRefreshToken ?? null, tokens.refreshToken ?? null],
    );
    return rowCount === 1;
  }
}

describe('on PostgreSQL', () => {
  let server: PostgresServer | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    server = await startPostgresServer();
    pool = new pg.Pool({ connectionString: server.url });
    pool.on('error', () => {});
    await createTokenTable(pool);
    await pool.query('CREATE TABLE user_tokens (user_id text PRIMARY KEY, tokens text NOT NULL)');
  });
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });

  describe('PostgresTokenStore', () => {
    conformance(() => ({
      makeStore: (key) => new PostgresTokenStore({ pool: pool!, key, lockTtlMs: LOCK_TTL_MS, encryptionKey: Buffer.alloc(32, 3) }),
      corrupt: async (key) => void (await pool!.query("UPDATE postsched_tokens SET tokens = 'enc:v1:AAAA:BBBB' WHERE key = $1", [key])),
      lockTtlMs: LOCK_TTL_MS,
    }));
  });

  describe('docs/tokens.md "Your own store": SqlTokenStore', () => {
    conformance(() => ({
      makeStore: (key) => new SqlTokenStore(pool!, key),
      corrupt: async (key) => void (await pool!.query("UPDATE user_tokens SET tokens = '{' WHERE user_id = $1", [key])),
    }));
  });
});

/** Runs every check; the names of those that failed. */
async function failing(options: TokenStoreConformanceOptions): Promise<string[]> {
  const failed: string[] = [];
  for (const check of tokenStoreConformance(options)) {
    await check.run().catch(() => failed.push(check.name));
  }
  return failed;
}

describe('broken stores fail the kit', () => {
  it('a store that ignores expectedRefreshToken fails the compare-and-set checks, and only those', async () => {
    class Overwriting extends MemoryTokenStore {
      override set(tokens: TokenSet, _options?: TokenStoreSetOptions): Promise<boolean> {
        return super.set(tokens); // a blind write
      }
    }
    const failed = await failing({ makeStore: perKey(() => new Overwriting()) });
    expect(failed.sort()).toEqual([
      'compare-and-set: of 8 writers racing from the same tokens, exactly one wins, 5 rounds in a row',
      'compare-and-set: refuses (returns false, keeps what is stored) when the store holds other tokens',
      // A deleted grant's mark refuses another process's write-back by the same compare-and-set.
      "the mark of a dead grant (getGrant, markReauthorizationRequired, delete): a compare-and-set, cleared by every write of tokens; delete leaves a mark that refuses a write-back",
    ]);
    expect(await failing({ makeStore: perKey(() => new MemoryTokenStore()) })).toEqual([]);
  });

  it('a store whose mark is no compare-and-set (it tells every caller it marked) fails the mark check, and only that', async () => {
    class EveryoneMarked extends MemoryTokenStore {
      override async markReauthorizationRequired(...args: Parameters<MemoryTokenStore['markReauthorizationRequired']>): Promise<boolean> {
        await super.markReauthorizationRequired(...args);
        return true; // each process would tell the app: one e-mail per process
      }
    }
    expect(await failing({ makeStore: perKey(() => new EveryoneMarked()) })).toEqual([
      "the mark of a dead grant (getGrant, markReauthorizationRequired, delete): a compare-and-set, cleared by every write of tokens; delete leaves a mark that refuses a write-back",
    ]);
  });

  it('a store whose lock does not exclude fails the lock check, and only that', async () => {
    class NotExcluding extends MemoryTokenStore {
      lock<T>(fn: () => Promise<T>): Promise<T> {
        return fn();
      }
    }
    const failed = await failing({ makeStore: perKey(() => new NotExcluding()) });
    // The extension check, run whenever the store has a lock, finds the same fault: a waiter inside with the holder.
    expect(failed).toEqual(['the lock excludes: 8 handles × 3 concurrent holders never overlap', 'the lock is extended: a live holder keeps it for 3 × lockTtlMs (3000 ms)']);
  });

  it('a store whose get() turns a corrupt value into "no tokens" fails the corrupt-value check', async () => {
    const values = new Map<string, string>();
    const makeStore = (key: string): TokenStore => ({
      get: async () => {
        try {
          return JSON.parse(values.get(key) ?? 'null') ?? undefined;
        } catch {
          return undefined; // swallowed: the user would be asked to sign in again
        }
      },
      set: async (tokens, options) => {
        const stored = values.has(key) ? (JSON.parse(values.get(key)!) as TokenSet) : undefined;
        const expected = options?.expectedRefreshToken;
        if (expected !== undefined && stored !== undefined && stored.refreshToken !== expected && stored.accessToken !== tokens.accessToken) return false;
        values.set(key, JSON.stringify(tokens));
        return true;
      },
    });
    const failed = await failing({ makeStore, corrupt: (key) => void values.set(key, '{not json') });
    expect(failed).toEqual(['a corrupt stored value fails to read: get() rejects, and a TokenManager gets a TokenStoreError']);
  });

  it('a lock that never expires fails the expiry check when lockTtlMs is given', async () => {
    class Queue extends MemoryTokenStore {
      #tail: Promise<unknown> = Promise.resolve();
      lock<T>(fn: () => Promise<T>): Promise<T> {
        const run = this.#tail.then(fn);
        this.#tail = run.catch(() => {});
        return run;
      }
    }
    const failed = await failing({ makeStore: perKey(() => new Queue()), lockTtlMs: 200 });
    expect(failed).toEqual(['the lock expires: a holder that stalls past lockTtlMs (200 ms) loses it to the next']);
  }, 30_000);

  /** A store in this process's memory (one per key) whose lock is a lease: taken for `leaseMs`, never extended. */
  function leaseStore(leaseMs: number, options: { keepOnThrow?: boolean; dropResult?: boolean } = {}) {
    return perKey(() => {
      const store = new MemoryTokenStore();
      let until = 0;
      return Object.assign(store, {
        async lock<T>(fn: () => Promise<T>): Promise<T> {
          while (Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
          until = Date.now() + leaseMs;
          const result = await fn().catch((error: unknown) => {
            if (!options.keepOnThrow) until = 0;
            throw error;
          });
          until = 0;
          return (options.dropResult ? undefined : result) as T;
        },
      });
    });
  }

  it('a lock() that drops what fn returns fails the lock-result check, and only that', async () => {
    expect(await failing({ makeStore: leaseStore(60_000, { dropResult: true }) })).toEqual([
      'lock() returns what fn returns, rethrows what fn throws, and is free again after fn threw',
    ]);
    expect(await failing({ makeStore: leaseStore(60_000) })).toEqual([]);
  }, 30_000);

  it('a lock not freed after fn threw fails the lock-result check within timeoutMs, instead of hanging it', async () => {
    const failed = await failing({ makeStore: leaseStore(600_000, { keepOnThrow: true }), timeoutMs: 1_000 });
    expect(failed).toEqual(['lock() returns what fn returns, rethrows what fn throws, and is free again after fn threw']);
  }, 30_000);

  it('a short lease never extended fails the extension check, without lockTtlMs given', async () => {
    expect(await failing({ makeStore: leaseStore(300) })).toEqual(['the lock is extended: a live holder keeps it for 3 × lockTtlMs (3000 ms)']);
  }, 30_000);

  it('a store that folds the case of its keys fails the different-keys check, and only that', async () => {
    const byKey = perKey(() => new MemoryTokenStore());
    const failed = await failing({ makeStore: (key) => byKey(key.toLowerCase()) });
    expect(failed).toEqual(['different keys are different tokens: keys that differ only in case, or in a lone surrogate (or these are refused)']);
  });

  it('a store that keeps only the fields it knows (losing the userId stamp) fails the every-field check, and only that', async () => {
    class KnownFieldsOnly extends MemoryTokenStore {
      override set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<boolean> {
        const known = ['accessToken', 'refreshToken', 'expiresAt', 'scopes', 'tokenType'];
        return super.set(Object.fromEntries(Object.entries(tokens).filter(([name]) => known.includes(name))) as TokenSet, options);
      }
    }
    const failed = await failing({ makeStore: perKey(() => new KnownFieldsOnly()) });
    expect(failed).toEqual(['set() then get() keeps every field: the userId stamp, and fields the store does not know']);
  });

  it('refuses a timeoutMs that is not a whole number of milliseconds', () => {
    for (const timeoutMs of [0, 1.5, -1, '1000']) {
      expect(() => tokenStoreConformance({ makeStore: () => new MemoryTokenStore(), timeoutMs: timeoutMs as number })).toThrow(/`timeoutMs` must be an integer from 1/);
    }
  });

  it('a store whose get() never answers fails every check that reads, each within timeoutMs', async () => {
    const makeStore = perKey((): TokenStore => Object.assign(new MemoryTokenStore(), { get: () => new Promise<undefined>(() => {}) }));
    const checks = tokenStoreConformance({ makeStore, timeoutMs: 300 });
    const outcomes = await Promise.all(checks.map((check) => check.run().then(() => 'passed', (error: Error) => error.message)));
    const reads = outcomes.filter((outcome) => outcome.includes('did not finish within 300 ms (`timeoutMs`)'));
    expect(reads.length).toBe(checks.filter((check) => !check.name.startsWith('the lock') && !check.name.startsWith('lock()')).length);
    expect(outcomes.filter((outcome) => outcome !== 'passed' && !reads.includes(outcome))).toEqual([]);
  });
});

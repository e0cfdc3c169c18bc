/**
 * PostgresWebhookDedupe against a real PostgreSQL server (started for this file): the store contract every shared
 * dedupe store meets (test/webhooks/dedupe-contract.ts, also run on Redis), the table (as SQL for migrations, made by
 * many processes at once), every row expiring and deleted by a bounded clean-up, and what the webhook handler
 * answers when PostgreSQL restarts or a statement stalls. Counted: answers, handler runs, rows; never time.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ValidationError } from '@postsched/sdk';
import { createWebhookDedupeTable, PostgresWebhookDedupe, webhookDedupeTableSql, WebhookDedupeUnavailableError } from '@postsched/sdk/postgres';
import { createWebhookHandler, type WebhookErrorContext } from '@postsched/sdk/webhooks';
import { context, hungHandler, KEY, SECRET, signed, sleep, transitions } from '../webhooks/dedupe-contract.js';
import { type PostgresServer, startPostgresServer } from './postgres-server.js';

let server: PostgresServer;
let pool: pg.Pool;
const pools: pg.Pool[] = [];
function newPool(max = 10): pg.Pool {
  const p = new pg.Pool({ connectionString: server.url, max });
  p.on('error', () => {}); // a connection the server ends while idle (a restart)
  pools.push(p);
  return p;
}
beforeAll(async () => {
  server = await startPostgresServer();
  pool = newPool();
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await server?.stop();
});

let tables = 0;
/** A table of its own for each store. */
async function freshTable(): Promise<string> {
  const table = `wh_${process.pid}_${++tables}`;
  await createWebhookDedupeTable(pool, { table });
  return table;
}
const rows = async (table: string, where = 'true') => Number((await pool.query(`SELECT count(*) AS n FROM "${table}" WHERE ${where}`)).rows[0].n);

describe('PostgresWebhookDedupe: the store contract', () => {
  transitions(async (options = {}) => new PostgresWebhookDedupe({ pool, table: await freshTable(), ...options }), { ordered: false });
});

describe('createWebhookHandler with PostgresWebhookDedupe', () => {
  hungHandler(async () => new PostgresWebhookDedupe({ pool, table: await freshTable() }));

  it('keeps post ids apart that PostgreSQL text would refuse (a NUL), and refuses lone surrogates as every store does', async () => {
    const dedupe = new PostgresWebhookDedupe({ pool, table: await freshTable() });
    for (const postId of ['a\u0000b', 'a\u0000c']) {
      const key = JSON.stringify(['post.published', postId, 'c']);
      expect(await dedupe.claim(key, context('a', 5, postId)), JSON.stringify(postId)).toEqual({ state: 'new' });
      await dedupe.complete(key, context('a', 5, postId));
    }
    expect(await dedupe.claim('["x"]', context('b', 4, 'a\u0000b'))).toEqual({ state: 'new', stale: true });
    // As UTF-8, each lone surrogate would become U+FFFD: two posts would share a row.
    for (const postId of ['\uD800', '\uDBFF', 'user\uDC00']) {
      await expect(dedupe.claim('["y"]', context('a', 5, postId))).rejects.toMatchObject({ name: 'ValidationError', path: ['context', 'postId'] });
    }
    await expect(dedupe.claim('["\uD800"]', context('a', 5, 'p'))).rejects.toMatchObject({ name: 'ValidationError', path: ['key'] });
  });
});

describe('the table', () => {
  it('is given as SQL for migrations, and made by 8 processes at once without an error', async () => {
    const sql = webhookDedupeTableSql({ table: 'app_wh.events' });
    expect(sql).toMatch(/^CREATE TABLE IF NOT EXISTS "app_wh"\."events" \(/);
    expect(sql).toMatch(/CREATE INDEX IF NOT EXISTS "events_expires_at_idx" ON "app_wh"\."events" \(expires_at\)/);
    await pool.query('CREATE SCHEMA app_wh');
    await pool.query(sql);
    await pool.query(sql); // again: nothing happens
    // 8 pools stand for 8 processes starting at once (without the lock: duplicate type and index errors, 23505).
    const fleet = Array.from({ length: 8 }, () => newPool(2));
    for (let round = 0; round < 3; round++) {
      const table = `wh_concurrent_${round}`;
      const outcomes = await Promise.allSettled(fleet.map((p) => createWebhookDedupeTable(p, { table })));
      expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
      expect(await new PostgresWebhookDedupe({ pool, table }).claim(KEY, context('a'))).toEqual({ state: 'new' });
    }
  });

  it('refuses a bad option with a ValidationError naming it; a missing table is a typed error saying how to make it', async () => {
    expect(() => new PostgresWebhookDedupe({ pool, table: 'x; DROP TABLE y' })).toThrow(ValidationError);
    expect(() => new PostgresWebhookDedupe({ pool, doneTtlMs: 0 })).toThrow(/^`doneTtlMs` must be an integer/);
    expect(() => new PostgresWebhookDedupe({ pool, statementTimeoutMs: 2 ** 31 })).toThrow(/^`statementTimeoutMs` must be an integer from 1 to 2147483647/);
    expect(() => new PostgresWebhookDedupe({ pool: {} as never })).toThrow(/^`pool` must be a node-postgres Pool/);
    expect(() => webhookDedupeTableSql({ tabel: 'x' } as never)).toThrow(ValidationError);
    const error = await new PostgresWebhookDedupe({ pool, table: 'no_such_table' }).claim(KEY, context('a')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookDedupeUnavailableError);
    expect(error).toMatchObject({ code: 'postgres_error', operation: 'claim', sqlState: '42P01' });
    expect(String((error as Error).message)).toMatch(/^PostgresWebhookDedupe could not claim a webhook event: PostgreSQL failed .* Create the table no_such_table first: `await createWebhookDedupeTable/);
  });
});

describe('every row expires', () => {
  it('ignores expired rows at once, and deletes them, at most 1,000 per statement, by clean-ups its own calls start', async () => {
    const table = await freshTable();
    const dedupe = new PostgresWebhookDedupe({ pool, table });
    await pool.query(
      `INSERT INTO "${table}" (post_id, key, claim_id, expires_at) SELECT '"p"', 'k' || i, NULL, now() - interval '1 second' FROM generate_series(1, 2500) i`,
    );
    const expired = () => rows(table, 'expires_at <= now()');
    expect(await dedupe.claim('k1', context('a', 1, 'p'))).toEqual({ state: 'new' }); // expired done mark: taken as new
    await dedupe.complete('k1', context('a', 1, 'p')); // starts the first clean-up
    await vi.waitFor(() => expect(expired()).resolves.toBe(1_499), { timeout: 10_000 });
    // A full batch: the next call goes on at once, until the backlog is gone.
    await dedupe.complete('n2', context('b', 1, 'p'));
    await vi.waitFor(() => expect(expired()).resolves.toBe(499), { timeout: 10_000 });
    await dedupe.complete('n3', context('c', 1, 'p'));
    await vi.waitFor(() => expect(expired()).resolves.toBe(0), { timeout: 10_000 });

    // Then once a minute (per store): done marks that expired since go at the first call after it.
    const short = new PostgresWebhookDedupe({ pool, table, doneTtlMs: 100 });
    await short.complete('s1', context('d', 1, 'p')); // its first clean-up: nothing expired yet
    await sleep(300);
    await short.complete('s2', context('e', 1, 'p'));
    await sleep(300);
    const gone = () => rows(table, "key IN ('s1', 's2')");
    expect(await gone()).toBe(2); // expired, kept until the minute is up
    expect(await short.claim('s1', context('f', 1, 'p'))).toEqual({ state: 'new' }); // but ignored at once
    await short.release('s1', context('f', 1, 'p'));
    vi.spyOn(Date, 'now').mockImplementation(() => new Date().getTime() + 61_000);
    try {
      await short.complete('s3', context('g', 1, 'p'));
      await vi.waitFor(() => expect(gone()).resolves.toBe(0), { timeout: 10_000 });
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('createWebhookHandler with PostgresWebhookDedupe when PostgreSQL fails', () => {
  const delivery = () => signed('post.published', '2024-05-01T12:05:00Z');

  /** A handler counting its successes (`statementTimeoutMs` short, so a stalled or dead server fails fast). */
  function counting(store: PostgresWebhookDedupe, onError: (error: unknown, context: WebhookErrorContext) => void = () => {}) {
    const counted = { succeeded: 0, byPost: new Map<string, number>() };
    const webhooks = createWebhookHandler({
      handlerTimeoutMs: 200,
      dedupeTimeoutMs: 1_000,
      inFlightTtlMs: 3_000,
      secret: SECRET,
      dedupe: store,
      onError,
      on: {
        'post.published': (event) => {
          counted.succeeded++;
          counted.byPost.set(event.data.id, (counted.byPost.get(event.data.id) ?? 0) + 1);
        },
      },
    });
    return { webhooks, counted };
  }

  /** Retries until one is answered 204 (at most 400): every answer before it, counted by status. */
  async function retryUntilHandled(webhooks: { fetch(request: Request): Promise<Response> }): Promise<number[]> {
    const statuses: number[] = [];
    while (statuses.at(-1) !== 204 && statuses.length < 400) {
      statuses.push((await webhooks.fetch(await delivery())).status);
      if (statuses.at(-1) !== 204) await sleep(50);
    }
    return statuses;
  }

  it('answers 500 and runs nothing while a statement stalls on a lock, then runs the event once (a late claim expires)', async () => {
    const table = await freshTable();
    const onError = vi.fn();
    const { webhooks, counted } = counting(new PostgresWebhookDedupe({ pool: newPool(), table, statementTimeoutMs: 150 }), onError);
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE "${table}" IN ACCESS EXCLUSIVE MODE`);
      for (let i = 0; i < 3; i++) expect((await webhooks.fetch(await delivery())).status).toBe(500);
      expect(counted.succeeded).toBe(0);
      const [error] = onError.mock.calls[0]!;
      expect(error).toBeInstanceOf(WebhookDedupeUnavailableError);
      expect(error).toMatchObject({ code: 'postgres_timeout', operation: 'claim', timeoutMs: 150 });
      expect(String((error as Error).message)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/); // no claim id
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    const statuses = await retryUntilHandled(webhooks);
    expect(statuses.at(-1)).toBe(204);
    expect(statuses.slice(0, -1).every((status) => status === 503 || status === 500)).toBe(true); // never 2xx before
    expect(counted.succeeded).toBe(1);
    expect((await webhooks.fetch(await delivery())).status).toBe(204);
    expect(counted.succeeded).toBe(1);
  });

  it.each(['fast', 'immediate'] as const)(
    'answers 500 with a typed error, never 2xx, while PostgreSQL restarts (-m %s), and runs each event once after it',
    { timeout: 120_000 },
    async (mode) => {
      const table = await freshTable();
      const onError = vi.fn();
      const { webhooks, counted } = counting(new PostgresWebhookDedupe({ pool: newPool(), table, statementTimeoutMs: 1_000 }), onError);
      const handled = async (postId: string) => {
        const request = await signed('post.published', '2024-05-01T12:05:00Z', postId);
        return (await webhooks.fetch(request)).status;
      };
      expect(await handled('before')).toBe(204);
      const during: Promise<number>[] = [];
      const restart = server.restart(mode);
      for (let i = 0; i < 5; i++) during.push(handled(`during_${i}`));
      await restart;
      const answers = await Promise.all(during);
      expect(answers.every((status) => status === 204 || status === 500)).toBe(true);
      expect(onError.mock.calls.every(([error]) => error instanceof WebhookDedupeUnavailableError)).toBe(true);
      // After it, every event is handled: those answered 500 are retried (a claim that landed expires).
      for (let i = 0; i < 5; i++) {
        const statuses: number[] = [];
        while (statuses.at(-1) !== 204 && statuses.length < 400) {
          statuses.push(await handled(`during_${i}`));
          if (statuses.at(-1) !== 204) await sleep(50);
        }
        expect(statuses.at(-1)).toBe(204);
      }
      expect(await handled('before')).toBe(204); // the done mark survived the restart
      // Each event ran once, or twice only when its done mark was lost (complete failed: answered 204 and reported).
      const unmarked = new Set(onError.mock.calls.filter(([, c]) => c.status === 204).map(([, c]) => c.event?.data.id));
      const ids = ['before', ...Array.from({ length: 5 }, (_, i) => `during_${i}`)];
      expect(ids.filter((id) => counted.byPost.get(id) !== 1 && !(unmarked.has(id) && counted.byPost.get(id) === 2))).toEqual([]);
    },
  );
});

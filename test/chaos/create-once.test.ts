/**
 * The create-once recipe (examples/create-post-once.ts) under chaos: 1,000 posts planned and sent by 4 processes
 * against the fake service over TCP, with answers dropped after the fake created the post (`faults.reset({ afterCommit: true })`) and
 * processes SIGKILLed mid-run, then restarted (each resumes from its PostgreSQL rows); once with the key honoured,
 * once with it never sent (the recipe's look-up alone). Counted, never timed: posts
 * created per row, each error the app saw, answers dropped, kills.
 */
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { PostSched } from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { SCHEMA } from '../../examples/create-post-once.js';
import { type PostgresServer, startPostgresServer } from '../postgres/postgres-server.js';
import { startWorkerFile, type Worker } from '../redis/multi-process/fleet.js';

const WORKER = fileURLToPath(new URL('./create-once-worker.ts', import.meta.url));
const JOBS = 1_000;
const PROCESSES = 4;
/** One answer in this many `POST /posts` is dropped after the post was created; a process is killed every this many posts. */
const DROP_EVERY = 6;
const KILL_EVERY = 90;

let postgres: PostgresServer;
let db: pg.Pool;
let fake: FakeService;
beforeAll(async () => {
  postgres = await startPostgresServer();
  db = new pg.Pool({ connectionString: postgres.url });
  db.on('error', () => {}); // its idle connections, when the server stops
});
afterAll(async () => {
  await db?.end();
  await postgres?.stop();
});
beforeEach(async () => {
  await db.query('DROP TABLE IF EXISTS planned_posts, create_errors');
  await db.query(SCHEMA);
  await db.query('CREATE TABLE create_errors (kind text NOT NULL)');
  fake = createFakeService();
});
afterEach(() => fake.close());

// With the key sent and honoured by the fake; and with it never sent: a service that does not honour it.
it.each([false, true])('1,000 posts, answers dropped after commit and processes killed mid-run (key ignored: %s): no duplicate, every lost answer reported as outcome unknown', { timeout: 600_000 }, async (ignoreKeys) => {
  const { url } = await fake.listen();
  const token = fake.issueTokens().access_token;
  const per = JOBS / PROCESSES;
  const config = (w: number) => ({ baseUrl: url, token, databaseUrl: postgres.url, from: w * per, to: (w + 1) * per, ignoreKeys });
  const workers: Worker<{ type: 'done' }, { type: 'exit' }>[] = [];
  let kills = 0;
  let dropsAdded = 0;
  let nextDrop = DROP_EVERY;
  let nextKill = KILL_EVERY;
  // One dropped answer pending at a time, every DROP_EVERY requests; a kill every KILL_EVERY posts created.
  const chaos = setInterval(() => {
    const sent = fake.stats.requests['POST /posts'] ?? 0;
    if (sent >= nextDrop && fake.stats.answersDropped === dropsAdded) {
      fake.faults.reset({ method: 'POST', path: '/posts', afterCommit: true });
      dropsAdded++;
      nextDrop = sent + DROP_EVERY;
    }
    if (fake.stats.postsCreated >= nextKill && nextKill < JOBS - KILL_EVERY) {
      nextKill += KILL_EVERY;
      const w = kills++ % PROCESSES;
      void workers[w]?.kill().then(() => {
        workers[w] = startWorkerFile(WORKER, config(w));
      });
    }
  }, 2);
  for (let w = 0; w < PROCESSES; w++) workers.push(startWorkerFile(WORKER, config(w)));
  // A worker killed and restarted is waited for in its new process.
  for (let w = 0; w < PROCESSES; w++) {
    for (;;) {
      const worker = workers[w] as Worker<{ type: 'done' }, { type: 'exit' }>;
      const done = await worker.next('done').then(() => true, () => false);
      if (done) break;
      while (workers[w] === worker) await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  clearInterval(chaos);
  await Promise.all(workers.map((w) => w.stop()));

  const client = new PostSched({ baseUrl: url, auth: token });
  const texts: string[] = [];
  for await (const post of client.posts.list({ pageSize: 100 })) texts.push(post.text ?? '');
  const rows = await db.query<{ id: string; post_id: string | null }>('SELECT id, post_id FROM planned_posts');
  const errors = await db.query<{ kind: string; n: number }>('SELECT kind, count(*)::int AS n FROM create_errors GROUP BY kind');
  const seen = Object.fromEntries(errors.rows.map((r) => [r.kind, r.n]));
  const dropped = fake.stats.answersDropped;
  console.log(`create-once chaos: ${JSON.stringify({ posts: texts.length, created: fake.stats.postsCreated, dropped, kills, errors: seen, requests: fake.stats.requests })}`);

  // No duplicate: one post per row, each row holding its post's id.
  expect(texts.length).toBe(JOBS);
  expect(new Set(texts).size).toBe(JOBS);
  expect(fake.stats.postsCreated).toBe(JOBS);
  expect(rows.rows.filter((r) => r.post_id === null)).toEqual([]);
  // The chaos happened.
  expect(dropped).toBeGreaterThanOrEqual(50);
  expect(kills).toBeGreaterThanOrEqual(5);
  // Every dropped answer the app saw was an unknown outcome, never a plain connection error; a process killed
  // between a drop and its count loses at most that one.
  expect(Object.keys(seen).filter((kind) => kind !== 'unknown' && kind !== 'ConflictError')).toEqual([]);
  expect(seen['unknown'] ?? 0).toBeLessThanOrEqual(dropped + kills);
  expect(seen['unknown'] ?? 0).toBeGreaterThanOrEqual(dropped - kills);
});

/**
 * examples/create-post-once.ts against the fake service (over TCP) and a real PostgreSQL server: the key is stored
 * before the send, a lost answer and a restart are each followed to exactly one post.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { PostSched } from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { main, planPost, resumeUnsent, SCHEMA, sendPlanned } from '../../examples/create-post-once.js';
import { type PostgresServer, startPostgresServer } from '../postgres/postgres-server.js';

let postgres: PostgresServer;
let db: pg.Pool;
let fake: FakeService;
let url: string;
let client: PostSched;
beforeAll(async () => {
  postgres = await startPostgresServer();
  db = new pg.Pool({ connectionString: postgres.url });
  db.on('error', () => {});
});
afterAll(async () => {
  await db?.end();
  await postgres?.stop();
});
beforeEach(async () => {
  await db.query('DROP TABLE IF EXISTS planned_posts');
  await db.query(SCHEMA);
  fake = createFakeService();
  ({ url } = await fake.listen());
  client = new PostSched({ baseUrl: url, auth: fake.issueTokens().access_token, maxRetries: 0 });
});
afterEach(() => fake.close());

const post = { accountId: 'acc_demo_x', publishAt: new Date(Date.UTC(2031, 0, 1)), text: 'Once only' };

it('main() as copied: plans the row, sends it, stores the post id', async () => {
  vi.spyOn(console, 'log').mockImplementation(() => {});
  const postId = await main({ DATABASE_URL: postgres.url, POSTSCHED_BASE_URL: url, POSTSCHED_ACCESS_TOKEN: fake.issueTokens().access_token, POSTSCHED_ACCOUNT_ID: 'acc_demo_x' });
  expect(fake.getPost(postId)?.status).toBe('scheduled');
  const { rows } = await db.query('SELECT post_id, idempotency_key FROM planned_posts');
  expect(rows).toEqual([{ post_id: postId, idempotency_key: expect.any(String) }]);
});

it('a lost answer: the post is found instead of sent again, one post', async () => {
  await planPost(db, 'row_1', post);
  fake.faults.reset({ method: 'POST', path: '/posts', afterCommit: true });
  const postId = await sendPlanned(db, client, 'row_1');
  expect(fake.stats.postsCreated).toBe(1);
  expect(fake.stats.requests['POST /posts']).toBe(1);
  expect(fake.getPost(postId)?.text).toBe('Once only');
});

it('a restart after the send (the row has no post id): found, not sent again; before the send: sent once', async () => {
  await planPost(db, 'row_sent', post);
  await planPost(db, 'row_unsent', { ...post, text: 'Not sent yet' });
  // The process died after sending row_sent (counted) and before storing its answer.
  await db.query("UPDATE planned_posts SET sends = 1 WHERE id = 'row_sent'");
  await client.posts.create({ account_ids: ['acc_demo_x'], publish_at: post.publishAt, text: 'Once only' });
  expect(await resumeUnsent(db, client)).toHaveLength(2);
  expect(fake.stats.postsCreated).toBe(2);
  const { rows } = await db.query('SELECT id FROM planned_posts WHERE post_id IS NULL');
  expect(rows).toEqual([]);
});

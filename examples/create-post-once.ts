/**
 * Create a post once, even when its answer is lost or the process dies mid-call (Node, PostgreSQL).
 *
 * The recipe:
 * 1. Make the idempotency key first and store it with the app's own record (a row), then send.
 * 2. On an unknown outcome (`isOutcomeUnknown`) or after a restart (a row without a post id), send again with the
 *    same key.
 * 3. Whether the service honours `Idempotency-Key` is not shown in its documentation, so before sending again, look
 *    for the post (`posts.list`, matching the row's account, time and text) and only send when it is not there.
 *    The spec does not show a post's text or publish-time field either: where the list leaves them out, nothing
 *    matches and only the key keeps the post from being created twice.
 *
 *   npm install @postsched/sdk pg && npm install -D tsx
 *
 * Against the local mock of the service (in a clone of this repository, `npm run mock` instead of `npx postsched mock`):
 *   npx postsched mock                    # terminal 1: paste its export lines into terminal 2
 *   DATABASE_URL=postgres://localhost/app npx tsx examples/create-post-once.ts     # terminal 2
 *
 * Against a real service, set POSTSCHED_BASE_URL, POSTSCHED_ACCESS_TOKEN and POSTSCHED_ACCOUNT_ID yourself.
 * Optional: POSTSCHED_POST_TEXT='Hello!'. If your app may schedule two posts with the same account, time and text,
 * put something of your own in the text (step 3 matches on them).
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { ConflictError, isOutcomeUnknown, PostSched, type Post } from '@postsched/sdk';

/** The app's own record of a post it wants: the key is made and stored before anything is sent. */
export const SCHEMA = `CREATE TABLE IF NOT EXISTS planned_posts (
  id text PRIMARY KEY,
  idempotency_key text NOT NULL,
  account_id text NOT NULL,
  publish_at timestamptz NOT NULL,
  body text NOT NULL,
  sends integer NOT NULL DEFAULT 0,
  post_id text
)`;

interface Row {
  id: string;
  idempotency_key: string;
  account_id: string;
  publish_at: Date;
  body: string;
  sends: number;
  post_id: string | null;
}

/** Step 1: the row, with its key, stored before any request. `id` is the app's own reference (unique). */
export async function planPost(db: pg.Pool, id: string, post: { accountId: string; publishAt: Date; text: string }): Promise<void> {
  await db.query('INSERT INTO planned_posts (id, idempotency_key, account_id, publish_at, body) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING', [
    id,
    randomUUID(),
    post.accountId,
    post.publishAt,
    post.text,
  ]);
}

/**
 * Steps 2 and 3: sends the row's post until the service's answer is known, and stores the post's id. Safe to call
 * again for the same row, from any process, after any failure or restart.
 */
export async function sendPlanned(db: pg.Pool, client: PostSched, id: string, attempts = 5): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const { rows } = await db.query<Row>('SELECT * FROM planned_posts WHERE id = $1', [id]);
    const row = rows[0];
    if (row === undefined) throw new Error(`No planned post ${id}: call planPost first.`);
    if (row.post_id !== null) return row.post_id;
    // Sent before (its answer lost, or the process died): the post may exist already.
    const found = row.sends > 0 ? await findPost(client, row) : undefined;
    if (found !== undefined) return record(db, id, found.id);
    await db.query('UPDATE planned_posts SET sends = sends + 1 WHERE id = $1', [id]);
    try {
      const post = await client.posts.create(
        { account_ids: [row.account_id], publish_at: row.publish_at, text: row.body },
        { idempotencyKey: row.idempotency_key },
      );
      return await record(db, id, post.id);
    } catch (error) {
      // Unknown: the service may have created it. In use: a send with this key is still being handled.
      const again = isOutcomeUnknown(error) || (error instanceof ConflictError && (error.body as { error?: { code?: string } } | undefined)?.error?.code === 'idempotency_key_in_use');
      if (!again || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/** After a restart: sends every row that has no post yet. */
export async function resumeUnsent(db: pg.Pool, client: PostSched): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM planned_posts WHERE post_id IS NULL ORDER BY id');
  const sent: string[] = [];
  for (const { id } of rows) sent.push(await sendPlanned(db, client, id));
  return sent;
}

/** Step 3: the scheduled post with the row's account, time and text, if the service has one. */
async function findPost(client: PostSched, row: Row): Promise<Post | undefined> {
  for await (const post of client.posts.list({ status: 'scheduled', pageSize: 100 })) {
    if (post.text === row.body && post.account_ids.includes(row.account_id) && Date.parse(post.publish_at ?? '') === row.publish_at.getTime()) return post;
  }
  return undefined;
}

async function record(db: pg.Pool, id: string, postId: string): Promise<string> {
  await db.query('UPDATE planned_posts SET post_id = $2 WHERE id = $1', [id, postId]);
  return postId;
}

/** Plans one post for tomorrow, resumes any left from an earlier run, then sends it. */
export async function main(env: Record<string, string | undefined> = process.env): Promise<string> {
  const need = (name: string): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`Set ${name} (see the top of examples/create-post-once.ts).`);
    return value;
  };
  const db = new pg.Pool({ connectionString: need('DATABASE_URL') });
  const client = new PostSched({ baseUrl: need('POSTSCHED_BASE_URL'), auth: need('POSTSCHED_ACCESS_TOKEN') });
  try {
    await db.query(SCHEMA);
    await resumeUnsent(db, client);
    const id = randomUUID();
    await planPost(db, id, { accountId: need('POSTSCHED_ACCOUNT_ID'), publishAt: new Date(Date.now() + 86_400_000), text: env.POSTSCHED_POST_TEXT ?? `Created once (${id.slice(0, 8)})` });
    const postId = await sendPlanned(db, client, id);
    console.log(`Scheduled ${postId} (row ${id}).`);
    return postId;
  } finally {
    await db.end();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void main();
}

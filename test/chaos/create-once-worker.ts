/**
 * One process of the create-once chaos test (create-once.test.ts): plans and sends the posts of jobs `from`..`to` by
 * the recipe of examples/create-post-once.ts, from the start each time it is (re)started. Each error `posts.create`
 * throws is counted in the `create_errors` table before anything else happens (outcome unknown, or another class).
 * `maxRetries: 0`, so that every lost answer reaches the app. `ignoreKeys`: the key is not sent, so only the
 * recipe's look-up keeps a post from being created twice. Config: env WORKER_CONFIG (JSON). Sends `done`.
 */
import pg from 'pg';
import { isOutcomeUnknown, PostSched } from '@postsched/sdk';
import { planPost, sendPlanned } from '../../examples/create-post-once.js';

const config = JSON.parse(process.env['WORKER_CONFIG'] ?? '{}') as { baseUrl: string; token: string; databaseUrl: string; from: number; to: number; ignoreKeys: boolean };
const db = new pg.Pool({ connectionString: config.databaseUrl, max: 2 });
// `ignoreKeys`: a service that does not honour Idempotency-Key (the spec does not show it), played by never sending it.
const withoutKey = (input: RequestInfo | URL, init?: RequestInit) => {
  const request = new Request(input, init);
  request.headers.delete('idempotency-key');
  return fetch(request);
};
const client = new PostSched({ baseUrl: config.baseUrl, auth: config.token, maxRetries: 0, ...(config.ignoreKeys ? { fetch: withoutKey } : {}) });
const create = client.posts.create.bind(client.posts);
client.posts.create = (params, options) =>
  create(params, options).catch(async (error: unknown) => {
    const kind = isOutcomeUnknown(error) ? 'unknown' : error instanceof Error ? error.name : 'other';
    await db.query('INSERT INTO create_errors (kind) VALUES ($1)', [kind]);
    throw error;
  }) as ReturnType<typeof create>;

for (let n = config.from; n < config.to; n++) {
  const id = `job_${String(n).padStart(4, '0')}`;
  await planPost(db, id, { accountId: 'acc_demo_x', publishAt: new Date(Date.UTC(2031, 0, 1) + n * 60_000), text: `post of ${id}` });
  await sendPlanned(db, client, id, 20);
}
await db.end();
process.send?.({ type: 'done' });

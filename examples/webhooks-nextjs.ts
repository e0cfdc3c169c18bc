/**
 * Receive Post Scheduling Service webhooks in a Next.js app router route handler.
 *
 *   npm install @postsched/sdk
 *
 * Save as app/api/webhooks/postsched/route.ts and set POSTSCHED_WEBHOOK_SECRET; the webhook URL is then
 * https://<your app>/api/webhooks/postsched. Runs on the Node.js and the Edge runtime alike.
 *
 * createWebhookHandler reads the raw body itself (do not call request.json() first), verifies it, runs the
 * handler of its event once (a retried delivery is answered 204 without running it again), and answers 204,
 * 400 with the reason, 500 when the handler throws (the service retries), or 405.
 */
import { createWebhookHandler } from '@postsched/sdk/webhooks';

/** Stand-in for your job queue (Vercel Queues, Inngest, SQS…): replace `queue.add` with a real one. */
const queue = {
  async add(name: string, data: Record<string, unknown>): Promise<void> {
    console.info(`queued ${name} ${JSON.stringify(data)}`);
  },
};

const webhooks = createWebhookHandler({
  secret: process.env.POSTSCHED_WEBHOOK_SECRET ?? '',
  on: {
    'post.published': (event) => queue.add('post-published', { postId: event.data.id, at: event.data.published_at }),
    'post.failed': (event) => queue.add('post-failed', { postId: event.data.id, accounts: event.data.account_ids }),
  },
  // Serverless instances do not share memory: to skip retried deliveries across them, give `dedupe` a shared
  // store (`RedisWebhookDedupe`, or your own): README.md#webhooks and docs/webhooks.md.
});

// A route file may export only route handlers and route options.
export const POST = webhooks.fetch;

/**
 * Receive Post Scheduling Service webhooks in a Cloudflare Worker.
 *
 *   npm install @postsched/sdk
 *   npx wrangler secret put POSTSCHED_WEBHOOK_SECRET     then deploy this file as the worker's main module
 *
 * Wrangler resolves @postsched/sdk with its `workerd` condition: the Web Crypto build, no Node.js compatibility
 * flag needed. The secret arrives in `env`, so the handler is made on the first request (and again if the
 * secret changes). Each isolate remembers the events it handled; to skip retried deliveries across isolates,
 * give `dedupe` a shared store (a Durable Object, or a D1 table with a unique key).
 */
import { createWebhookHandler, type WebhookHandler } from '@postsched/sdk/webhooks';

/** The worker's bindings. */
export interface Env {
  POSTSCHED_WEBHOOK_SECRET: string;
}

/** Stand-in for your job queue: with a Queues binding, `env.POSTS_QUEUE.send({ name, ...data })`. */
const queue = {
  async add(name: string, data: Record<string, unknown>): Promise<void> {
    console.info(`queued ${name} ${JSON.stringify(data)}`);
  },
};

let current: { secret: string; webhooks: WebhookHandler } | undefined;

function webhooksFor(env: Env): WebhookHandler {
  if (current?.secret !== env.POSTSCHED_WEBHOOK_SECRET) {
    const webhooks = createWebhookHandler({
      secret: env.POSTSCHED_WEBHOOK_SECRET,
      on: {
        'post.published': (event) => queue.add('post-published', { postId: event.data.id, at: event.data.published_at }),
        'post.failed': (event) => queue.add('post-failed', { postId: event.data.id, accounts: event.data.account_ids }),
      },
    });
    current = { secret: env.POSTSCHED_WEBHOOK_SECRET, webhooks };
  }
  return current.webhooks;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    if (new URL(request.url).pathname !== '/webhooks/postsched') return new Response('Not found', { status: 404 });
    return webhooksFor(env).fetch(request);
  },
};

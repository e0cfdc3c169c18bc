/**
 * Receive Post Scheduling Service webhooks with Hono.
 *
 *   npm install @postsched/sdk hono @hono/node-server && npm install -D tsx   # tsx runs the TypeScript file
 *   POSTSCHED_WEBHOOK_SECRET=whsec_… npx tsx examples/webhooks-hono.ts
 *
 * Under Node this file serves itself with @hono/node-server; on Bun or Deno, `export default app` is all it takes
 * (`bun run`, `deno serve`), and on Cloudflare Workers see examples/webhooks-cloudflare.ts for the secret.
 * createWebhookHandler gets the raw Request (c.req.raw): verification needs the bytes as sent.
 */
import { pathToFileURL } from 'node:url';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createWebhookHandler } from '@postsched/sdk/webhooks';

/** Stand-in for your job queue (BullMQ, SQS, a database table…): replace `queue.add` with a real one. */
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
});

export const app = new Hono();
// `all`, not `post`: the handler answers 405 (with Allow: POST) to other methods itself.
app.all('/webhooks/postsched', (c) => webhooks.fetch(c.req.raw));

export default app;

// Serve only when run directly with Node (not when imported by a test, Bun or Deno).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // 127.0.0.1 only: a webhook receiver on every interface is reachable from the whole network.
  serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) =>
    console.log(`Listening on http://127.0.0.1:${info.port}/webhooks/postsched`),
  );
}

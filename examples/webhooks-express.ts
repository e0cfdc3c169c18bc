/**
 * Receive Post Scheduling Service webhooks in Express.
 *
 *   npm install @postsched/sdk express && npm install -D tsx @types/express   # tsx runs the TypeScript file
 *   POSTSCHED_WEBHOOK_SECRET=whsec_… npx tsx examples/webhooks-express.ts
 *
 * createWebhookHandler verifies each delivery on its raw bytes, runs the handler of its event once (a retried
 * delivery is answered 204 without running it again), and answers what the service needs: 204 when done, 400
 * with the reason for a delivery that does not verify, 500 when your handler throws (the service retries).
 * Mount it with no body parser before it: express.json() would consume the bytes the signature covers.
 */
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import express from 'express';
import { createWebhookHandler } from '@postsched/sdk/webhooks';

/** Stand-in for your job queue (BullMQ, SQS, a database table…): replace `queue.add` with a real one. */
const queue = {
  async add(name: string, data: Record<string, unknown>): Promise<void> {
    console.info(`queued ${name} ${JSON.stringify(data)}`);
  },
};

export function createApp(): express.Express {
  const webhooks = createWebhookHandler({
    secret: process.env.POSTSCHED_WEBHOOK_SECRET ?? '',
    // Enqueue and return: the slow work (emails, API calls) runs in a worker, so the service never waits on it.
    on: {
      'post.published': (event) => queue.add('post-published', { postId: event.data.id, at: event.data.published_at }),
      'post.failed': (event) => queue.add('post-failed', { postId: event.data.id, accounts: event.data.account_ids }),
    },
    onError(error, { status }) {
      if (status === 400) console.warn(`Rejected webhook: ${(error as Error).message}`);
      else console.error('Webhook not handled; the service will retry:', error);
    },
    // Several processes or servers? Share what was handled, e.g. with ioredis:
    // dedupe: {
    //   claim: async (key) => (await redis.set(`postsched:webhook:${key}`, '1', 'EX', 7 * 86_400, 'NX')) === 'OK',
    //   release: (key) => redis.del(`postsched:webhook:${key}`),
    // },
  });

  const app = express();
  // `all`, not `post`: the handler answers 405 (with Allow: POST) to other methods itself.
  app.all('/webhooks/postsched', webhooks.node);
  app.use(express.json()); // the rest of your app may parse JSON: after the webhook route
  return app;
}

// Listen only when run directly (not when imported by a test).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // 127.0.0.1 only: a webhook receiver on every interface is reachable from the whole network.
  const server = createApp().listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () =>
    console.log(`Listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/postsched`),
  );
}

/**
 * Receive Post Scheduling Service webhooks in Express.
 *
 *   POSTSCHED_WEBHOOK_SECRET=whsec_… npx tsx examples/webhooks-express.ts
 *
 * The route uses express.raw(): the signature covers the exact bytes sent, so the body must reach
 * verifyWebhook unparsed (express.json() would re-serialize it and every delivery would fail).
 */
import { pathToFileURL } from 'node:url';
import express from 'express';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from '@postsched/sdk/webhooks';

/** Stand-in for your job queue (BullMQ, SQS, a database table…): replace `enqueue` with a real one. */
export const jobs: WebhookEvent[] = [];
async function enqueue(event: WebhookEvent): Promise<void> {
  jobs.push(event);
}

export function createApp(): express.Express {
  const app = express();

  app.post('/webhooks/postsched', express.raw({ type: 'application/json' }), async (req, res) => {
    let event: WebhookEvent;
    try {
      event = await verifyWebhook({
        body: req.body,
        signature: req.headers,
        secret: process.env.POSTSCHED_WEBHOOK_SECRET ?? '',
      });
    } catch (error) {
      // A bad secret is our configuration, not the sender's fault: let it become a 500 and an alert.
      if (!(error instanceof WebhookVerificationError) || error.reason === 'invalid_secret') throw error;
      console.warn(`Rejected webhook: ${error.message}`);
      res.status(400).send(error.reason);
      return;
    }

    // Enqueue and answer at once; do the slow work (emails, API calls) in a worker, so the
    // service never waits on it. Handle each event idempotently: a delivery may come twice.
    await enqueue(event);
    res.sendStatus(204);
  });

  return app;
}

// Listen only when run directly (not when imported by a test).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 3000);
  createApp().listen(port, () => console.log(`Listening on http://localhost:${port}/webhooks/postsched`));
}

/**
 * Receive Post Scheduling Service webhooks with a Fetch-style handler.
 *
 * - Next.js (app router): save as app/api/webhooks/postsched/route.ts.
 * - Hono: app.post('/webhooks/postsched', (c) => POST(c.req.raw))
 * - Bun: Bun.serve({ fetch: POST }); Deno: Deno.serve(POST)
 * - Cloudflare Workers: read the secret from `env` instead of process.env.
 *
 * verifyWebhookRequest reads the raw bytes itself: do not call request.json() or request.text() before it.
 */
import { verifyWebhookRequest, WebhookVerificationError, type WebhookEvent } from '@postsched/sdk/webhooks';

/** Stand-in for your job queue (Vercel Queues, Cloudflare Queues, Inngest, SQS…): replace `enqueue`. */
export const jobs: WebhookEvent[] = [];
async function enqueue(event: WebhookEvent): Promise<void> {
  jobs.push(event);
}

export async function POST(request: Request): Promise<Response> {
  let event: WebhookEvent;
  try {
    event = await verifyWebhookRequest(request, process.env.POSTSCHED_WEBHOOK_SECRET ?? '');
  } catch (error) {
    // A bad secret is our configuration, not the sender's fault: let it become a 500 and an alert.
    if (!(error instanceof WebhookVerificationError) || error.reason === 'invalid_secret') throw error;
    console.warn(`Rejected webhook: ${error.message}`);
    return new Response(error.reason, { status: 400 });
  }

  // Enqueue and answer at once; do the slow work in a worker so the service never waits on it.
  // Handle each event idempotently: a delivery may come twice.
  await enqueue(event);
  return new Response(null, { status: 204 });
}

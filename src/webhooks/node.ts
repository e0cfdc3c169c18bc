/**
 * Node-only. `@postsched/sdk/webhooks` under Node (package.json "exports" → "node"): the same API as
 * `index.ts`, with the HMAC on `node:crypto` (synchronous, several times faster than `crypto.subtle` in Node).
 */
import { nodeCrypto } from './crypto-node.js';
import { createHandlerWith, type WebhookHandler, type WebhookHandlerOptions } from './handler.js';

export * from './verifier-node.js';
export * from './handler-public.js';

/**
 * A ready-to-mount webhook endpoint: verifies each delivery (header and timestamp before the body, the body
 * read raw up to `maxBodyBytes`), claims the event (`dedupe`), runs the handler typed for its event within
 * `handlerTimeoutMs`, and answers 204 / 503 while it is in flight elsewhere / 400 with the reason / 500 so the
 * service retries / 405. Adapters: `.fetch(request)` and `.node(req, res)`.
 *
 * @example
 * const webhooks = createWebhookHandler({
 *   secret: process.env.POSTSCHED_WEBHOOK_SECRET!,
 *   on: { 'post.published': (event) => queue.add('published', { id: event.data.id, at: event.data.published_at }) },
 * })
 * export const POST = webhooks.fetch          // Next.js route; Express: app.post('/webhooks', webhooks.node)
 */
export function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  return createHandlerWith(nodeCrypto, options);
}

/**
 * `@postsched/sdk/webhooks` for every runtime (Web Crypto). Node resolves `node.ts` instead through the
 * package's "node" export condition; both export the same API and pass the same tests.
 * The verifier (also in the main entry) and the handler (this entry only) tree-shake apart.
 */
import { webCrypto } from './crypto-web.js';
import { createHandlerWith, type WebhookHandler, type WebhookHandlerOptions } from './handler.js';

export * from './verifier.js';
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
  return createHandlerWith(webCrypto, options);
}

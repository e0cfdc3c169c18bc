/**
 * Node-only. The verifier under Node (package.json "exports" → "node"): the same API as `verifier.ts`, with the
 * HMAC on `node:crypto` (synchronous, several times faster than `crypto.subtle` in Node).
 */
import { nodeCrypto } from './crypto-node.js';
import type { WebhookEvent } from './event.js';
import type { WebhookSecret } from './signature.js';
import type { SignWebhookOptions, VerifyWebhookOptions, VerifyWebhookRequestOptions } from './verify.js';
import { signWith, verifyDelivery, verifyRequestWith } from './verify.js';

export * from './public.js';

// Bound, not wrapped: one definition of each function for both runtimes (verify.ts), and `@__PURE__` lets a bundler
// drop the ones an app does not import.

/**
 * Verifies a webhook delivery and returns its typed event; throws `WebhookVerificationError` otherwise.
 *
 * @example
 * app.post('/webhooks', express.raw({ type: 'application/json' }), async (req, res) => {
 *   const event = await verifyWebhook({ body: req.body, signature: req.headers, secret })
 *   res.sendStatus(204)
 * })
 */
export const verifyWebhook: (options: VerifyWebhookOptions) => Promise<WebhookEvent> = /* @__PURE__ */ verifyDelivery.bind(undefined, nodeCrypto);

/**
 * Verifies a Fetch `Request` (Next.js route handlers, Hono, Bun, Deno, workers). The header and its timestamp
 * are checked first; only then is the body read, once, up to `maxBodyBytes` (1 MiB by default).
 *
 * @example
 * export async function POST(request: Request) {
 *   const event = await verifyWebhookRequest(request, process.env.POSTSCHED_WEBHOOK_SECRET!)
 *   return new Response(null, { status: 204 })
 * }
 */
export const verifyWebhookRequest: (request: Request, secret: WebhookSecret, options?: VerifyWebhookRequestOptions) => Promise<WebhookEvent> =
  /* @__PURE__ */ verifyRequestWith.bind(undefined, nodeCrypto);

/**
 * Signs a body as the service does, for your own tests; returns the `X-Service-Signature` value.
 *
 * @example
 * const signature = await signWebhook({ body, secret: 'whsec_test' })
 * await fetch(url, { method: 'POST', body, headers: { 'X-Service-Signature': signature } })
 */
export const signWebhook: (options: SignWebhookOptions) => Promise<string> = /* @__PURE__ */ signWith.bind(undefined, nodeCrypto);

/**
 * `@postsched/sdk/webhooks` for every runtime (Web Crypto). Node resolves `node.ts` instead through the package's
 * "node" export condition: the same API, with the HMAC on node:crypto. The verifier and the handler tree-shake
 * apart: a bundle of `verifyWebhook` alone holds nothing of the handler (test/size/webhooks-tree-shaking.test.ts).
 */
import { webCrypto } from './crypto-web.js';
import type { WebhookEvent } from './event.js';
import { createHandlerWith, type WebhookHandler, type WebhookHandlerOptions } from './handler.js';
import type { WebhookSecret } from './signature.js';
import { signWith, verifyDelivery, verifyRequestWith, type SignWebhookOptions, type VerifyWebhookOptions, type VerifyWebhookRequestOptions } from './verify.js';

export { DEFAULT_WEBHOOK_MAX_BODY_BYTES, type WebhookBody } from './body.js';
export {
  webhookDedupeKey,
  type WebhookClaim,
  type WebhookClaimContext,
  type WebhookClaimResult,
  type WebhookClaimState,
  type WebhookDedupe,
  type WebhookDedupeStore,
  type WebhookHandlerContext,
} from './dedupe.js';
export {
  WebhookTimeoutError,
  WebhookVerificationError,
  type WebhookTimedStep,
  type WebhookTimeoutReason,
  type WebhookVerificationReason,
} from './errors.js';
export {
  PostDeletedEventSchema,
  PostFailedEventSchema,
  PostPublishedDataSchema,
  PostPublishedEventSchema,
  PostScheduledEventSchema,
  UnknownWebhookEventSchema,
  WEBHOOK_EVENT_TYPES,
  WebhookEventSchema,
  WebhookPostDataSchema,
  type KnownWebhookEvent,
  type PostDeletedEvent,
  type PostFailedEvent,
  type PostPublishedData,
  type PostPublishedEvent,
  type PostScheduledEvent,
  type UnknownWebhookEvent,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookPostData,
} from './event.js';
export type { WebhookErrorContext, WebhookEventHandlers, WebhookHandler, WebhookHandlerOptions } from './handler.js';
export type { NodeWebhookRequest, NodeWebhookResponse } from './handler-node.js';
export { WEBHOOK_SIGNATURE_HEADER, type HeadersGetter, type HeadersRecord, type WebhookSecret, type WebhookSignature } from './signature.js';
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  type SignWebhookOptions,
  type VerifyWebhookClockOptions,
  type VerifyWebhookOptions,
  type VerifyWebhookRequestOptions,
} from './verify.js';

// Bound, not wrapped: one definition of each function for both runtimes (verify.ts), and `@__PURE__` lets a bundler
// drop the ones an app does not import.

/**
 * Verifies a webhook delivery and returns its typed event; throws `WebhookVerificationError` otherwise.
 *
 * @function
 * @example
 * app.post('/webhooks', express.raw({ type: 'application/json' }), async (req, res) => {
 *   const event = await verifyWebhook({ body: req.body, signature: req.headers, secret })
 *   res.sendStatus(204)
 * })
 */
export const verifyWebhook: (options: VerifyWebhookOptions) => Promise<WebhookEvent> = /* @__PURE__ */ verifyDelivery.bind(undefined, webCrypto);

/**
 * Verifies a Fetch `Request` (Next.js route handlers, Hono, Bun, Deno, workers). The header and its timestamp
 * are checked first; only then is the body read, once, up to `maxBodyBytes` (1 MiB by default).
 *
 * @function
 * @example
 * export async function POST(request: Request) {
 *   const event = await verifyWebhookRequest(request, process.env.POSTSCHED_WEBHOOK_SECRET!)
 *   return new Response(null, { status: 204 })
 * }
 */
export const verifyWebhookRequest: (request: Request, secret: WebhookSecret, options?: VerifyWebhookRequestOptions) => Promise<WebhookEvent> =
  /* @__PURE__ */ verifyRequestWith.bind(undefined, webCrypto);

/**
 * Signs a body as the service does, for your own tests; returns the `X-Service-Signature` value.
 *
 * @function
 * @example
 * const signature = await signWebhook({ body, secret: 'whsec_test' })
 * await fetch(url, { method: 'POST', body, headers: { 'X-Service-Signature': signature } })
 */
export const signWebhook: (options: SignWebhookOptions) => Promise<string> = /* @__PURE__ */ signWith.bind(undefined, webCrypto);

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

/**
 * Node-only. `@postsched/sdk/webhooks` under Node (package.json "exports" → "node"): everything `index.ts` exports,
 * with its four functions bound here to node:crypto instead (synchronous, several times faster than `crypto.subtle`
 * in Node). A name this file declares hides the one `export *` brings (local exports win over star exports), so
 * both entries export the same names and pass the same tests (test/webhooks/entries.test.ts).
 */
import { nodeCrypto } from './crypto-node.js';
import type { WebhookEvent } from './event.js';
import { createHandlerWith, type WebhookHandler, type WebhookHandlerOptions } from './handler.js';
import type { WebhookSecret } from './signature.js';
import { signWith, verifyDelivery, verifyRequestWith, type SignWebhookOptions, type VerifyWebhookOptions, type VerifyWebhookRequestOptions } from './verify.js';

export * from './index.js';

/** `verifyWebhook` of `index.ts` on node:crypto: verifies a delivery and returns its typed event, or throws `WebhookVerificationError`. */
export const verifyWebhook: (options: VerifyWebhookOptions) => Promise<WebhookEvent> = /* @__PURE__ */ verifyDelivery.bind(undefined, nodeCrypto);

/** `verifyWebhookRequest` of `index.ts` on node:crypto: verifies a Fetch `Request`, its body read once the header passed. */
export const verifyWebhookRequest: (request: Request, secret: WebhookSecret, options?: VerifyWebhookRequestOptions) => Promise<WebhookEvent> =
  /* @__PURE__ */ verifyRequestWith.bind(undefined, nodeCrypto);

/** `signWebhook` of `index.ts` on node:crypto: signs a body as the service does; returns the `X-Service-Signature` value. */
export const signWebhook: (options: SignWebhookOptions) => Promise<string> = /* @__PURE__ */ signWith.bind(undefined, nodeCrypto);

/** `createWebhookHandler` of `index.ts` on node:crypto: a ready-to-mount webhook endpoint (`.fetch`, `.node`). */
export function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  return createHandlerWith(nodeCrypto, options);
}

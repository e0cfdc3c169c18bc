/** What both webhook entries export of the handler, beside `createWebhookHandler` itself (not in the main entry). */
export {
  webhookDedupeKey,
  type WebhookClaim,
  type WebhookClaimContext,
  type WebhookClaimResult,
  type WebhookClaimState,
  type WebhookDedupe,
  type WebhookDedupeStore,
} from './dedupe.js';
export type {
  WebhookErrorContext,
  WebhookEventHandlers,
  WebhookHandler,
  WebhookHandlerContext,
  WebhookHandlerOptions,
} from './handler.js';
export type { NodeWebhookRequest, NodeWebhookResponse } from './handler-node.js';
export { WebhookTimeoutError, type WebhookTimedStep, type WebhookTimeoutReason } from './errors.js';

/** Everything both webhook entries export besides the three functions, so the two stay identical. */
export type { WebhookBody } from './body.js';
export { DEFAULT_WEBHOOK_MAX_BODY_BYTES, DEFAULT_WEBHOOK_TOLERANCE_SECONDS } from './constants.js';
export { WebhookVerificationError, type WebhookVerificationReason } from './errors.js';
export {
  WEBHOOK_EVENT_TYPES,
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
export { WEBHOOK_SIGNATURE_HEADER, type HeadersGetter, type HeadersRecord, type WebhookSecret, type WebhookSignature } from './signature.js';
export type {
  SignWebhookOptions,
  VerifyWebhookClockOptions,
  VerifyWebhookOptions,
  VerifyWebhookRequestOptions,
} from './verify.js';

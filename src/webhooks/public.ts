/** Everything both webhook entries export besides the three functions, so the two stay identical. */
export { DEFAULT_WEBHOOK_MAX_BODY_BYTES, type WebhookBody } from './body.js';
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
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  type SignWebhookOptions,
  type VerifyWebhookClockOptions,
  type VerifyWebhookOptions,
  type VerifyWebhookRequestOptions,
} from './verify.js';

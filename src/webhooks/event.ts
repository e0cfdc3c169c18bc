/** Webhook event types (service spec §6) and the check that turns parsed JSON into one. */
import { isRecord } from '../core/is-record.js';
import { reject } from './errors.js';

/**
 * `data` of `post.scheduled`, `post.failed` and `post.deleted`. The spec shows the data of `post.published` only
 * (§6: "Data fields for events other than post.published: not shown"), so `id` and `account_ids` are typed here as
 * what they probably are, but not required: a correctly signed event comes back whatever its data holds, each field
 * as the service sent it (assumptions.md "Webhook data of events other than post.published").
 */
export interface WebhookPostData {
  /** Post identifier (assumed: check it before use). */
  id?: string | undefined;
  /** Identifiers of the accounts the post targets (assumed: check it before use). */
  account_ids?: string[] | undefined;
  [field: string]: unknown;
}

/** `data` of `post.published` (spec §2 and §6): the post, its target accounts, and when it went out. Checked. */
export interface PostPublishedData extends WebhookPostData {
  /** Post identifier. */
  id: string;
  /** Identifiers of the accounts the post targets. */
  account_ids: string[];
  /** ISO 8601 UTC timestamp of publication. */
  published_at: string;
}

/** The shape every post event shares (spec §6): its name, when it happened, and the post's data. */
interface PostEvent<Name extends string, Data> {
  /** The event name, for example `post.published`. */
  event: Name;
  /** ISO 8601 UTC timestamp of the event. */
  created_at: string;
  /** The post the event is about. */
  data: Data;
}

/** A post was queued for future publication. */
export type PostScheduledEvent = PostEvent<'post.scheduled', WebhookPostData>;
/** A post was delivered to at least one platform. */
export type PostPublishedEvent = PostEvent<'post.published', PostPublishedData>;
/** Delivery failed on one or more platforms. */
export type PostFailedEvent = PostEvent<'post.failed', WebhookPostData>;
/** A scheduled post was cancelled. */
export type PostDeletedEvent = PostEvent<'post.deleted', WebhookPostData>;

/** The events this SDK knows. */
export type KnownWebhookEvent = PostScheduledEvent | PostPublishedEvent | PostFailedEvent | PostDeletedEvent;

/** Names of the events this SDK knows. */
export type WebhookEventType = KnownWebhookEvent['event'];

/**
 * A correctly signed event whose name this SDK version does not know (the service added one). Its `event` is
 * `'unknown'` so that `switch (event.event)` still narrows every known case; the name sent is in
 * `originalEvent`, and every field of the body is kept.
 */
export interface UnknownWebhookEvent {
  /** Always `'unknown'`; the name sent is in `originalEvent`. */
  event: 'unknown';
  /** The event name as the service sent it. */
  originalEvent: string;
  /** ISO 8601 UTC timestamp of the event. */
  created_at: string;
  /** The event's data, unchecked. */
  data: Record<string, unknown>;
  [field: string]: unknown;
}

/**
 * What `verifyWebhook` returns: a union discriminated on `event`.
 *
 * @example
 * switch (event.event) {
 *   case 'post.published': console.log(event.data.id, event.data.published_at); break
 *   case 'post.failed': alertOwner(event.data.account_ids ?? []); break
 *   case 'unknown': console.warn('new event type', event.originalEvent); break
 * }
 */
export type WebhookEvent = KnownWebhookEvent | UnknownWebhookEvent;

/**
 * The event names this SDK knows.
 *
 * @example
 * WEBHOOK_EVENT_TYPES.includes('post.failed') // true
 */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'post.scheduled',
  'post.published',
  'post.failed',
  'post.deleted',
];

function isText(value: unknown): value is string {
  return typeof value === 'string';
}

/** Throws `invalid_event`: what is wrong with the envelope (`bad <field>`). */
function invalid(problem: string): never {
  reject('invalid_event', `Signed body is not an event: ${problem}`);
}

/** Checks the envelope (and the data of post.published); returns the parsed body itself. */
export function toWebhookEvent(body: unknown): WebhookEvent {
  if (!isRecord(body)) invalid('not an object');
  const { event, created_at: createdAt, data } = body;
  if (!isText(event) || !event) invalid('bad event'); // '' too
  if (!isText(createdAt)) invalid('bad created_at');
  if (!isRecord(data)) invalid('bad data');
  if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(event)) {
    return { ...body, event: 'unknown', originalEvent: event } as UnknownWebhookEvent;
  }
  // Only post.published has its data shown by the spec; the data of the other events is returned as sent.
  if (event === 'post.published') {
    if (!isText(data.id)) invalid('bad data.id');
    const accounts = data.account_ids;
    if (!Array.isArray(accounts) || !accounts.every(isText)) invalid('bad data.account_ids');
    if (!isText(data.published_at)) invalid('bad data.published_at');
  }
  return body as unknown as KnownWebhookEvent;
}

/** Webhook event types (service spec §6) and the check that turns parsed JSON into one. */
import * as z from 'zod/mini';
import { assumed, text, texts, wireObject } from '../core/wire-schema.js';
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

/** The shape every post event shares (spec §6): its name, when it happened, and the post's data (loose: other fields kept). */
interface PostEvent<Name extends string, Data> {
  /** The event name, for example `post.published`. */
  event: Name;
  /** ISO 8601 UTC timestamp of the event. */
  created_at: string;
  /** The post the event is about. */
  data: Data;
  /** Fields of the envelope the spec does not show, kept as sent. */
  [field: string]: unknown;
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

/** Known event names, for the schema of the others. */
const KNOWN: readonly string[] = WEBHOOK_EVENT_TYPES;

/**
 * `data` of `post.scheduled`, `post.failed` and `post.deleted`: any object; `id` and `account_ids` are assumed,
 * kept as sent. The schema behind `WebhookPostData`.
 */
export const WebhookPostDataSchema = /* @__PURE__ */ wireObject({
  /** Post identifier (assumed). */
  id: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
  /** Identifiers of the accounts the post targets (assumed). */
  account_ids: /* @__PURE__ */ assumed(/* @__PURE__ */ texts()),
});

/**
 * `data` of `post.published` (spec §2 and §6): `id`, `account_ids` and `published_at` required. The schema behind
 * `PostPublishedData`.
 */
export const PostPublishedDataSchema = /* @__PURE__ */ wireObject({
  /** Post identifier. */
  id: /* @__PURE__ */ text(),
  /** Identifiers of the accounts the post targets. */
  account_ids: /* @__PURE__ */ texts(),
  /** ISO 8601 UTC timestamp of publication. */
  published_at: /* @__PURE__ */ text(),
});

/** The envelope of one known event (spec §6): its name, when it happened, and its data. */
function postEvent<const Name extends WebhookEventType, Data extends z.ZodMiniType>(name: Name, data: Data) {
  return wireObject({
    /** The event name. */
    event: z.literal(name),
    /** ISO 8601 UTC timestamp of the event. */
    created_at: text(),
    /** The post the event is about. */
    data,
  });
}

/**
 * A `post.scheduled` event. The schema behind `PostScheduledEvent`.
 */
export const PostScheduledEventSchema = /* @__PURE__ */ postEvent('post.scheduled', WebhookPostDataSchema);
/**
 * A `post.published` event, its data checked. The schema behind `PostPublishedEvent`.
 */
export const PostPublishedEventSchema = /* @__PURE__ */ postEvent('post.published', PostPublishedDataSchema);
/**
 * A `post.failed` event. The schema behind `PostFailedEvent`.
 */
export const PostFailedEventSchema = /* @__PURE__ */ postEvent('post.failed', WebhookPostDataSchema);
/**
 * A `post.deleted` event. The schema behind `PostDeletedEvent`.
 */
export const PostDeletedEventSchema = /* @__PURE__ */ postEvent('post.deleted', WebhookPostDataSchema);

/**
 * An event of a name this SDK does not know (non-empty), its envelope checked; parsed into an `UnknownWebhookEvent`
 * (`event: 'unknown'`, the name sent in `originalEvent`).
 */
export const UnknownWebhookEventSchema: z.ZodMiniType<UnknownWebhookEvent, unknown> = /* @__PURE__ */ wireObject({
  /** The event name as the service sent it. */
  event: /* @__PURE__ */ text(),
  /** ISO 8601 UTC timestamp of the event. */
  created_at: /* @__PURE__ */ text(),
  /** The event's data, unchecked. */
  data: /* @__PURE__ */ wireObject({}),
}).check(
  // One check that refuses a known or empty name and renames the event, as zod's own `z.overwrite` rewrites a value:
  // `z.pipe` with `z.transform` costs 0.26 KB gz more in `verifyWebhook`, a `z.refine` on `event` 0.25 KB.
  /* @__PURE__ */ z.check((payload) => {
    const body = payload.value;
    if (body.event === '' || KNOWN.includes(body.event)) {
      payload.issues.push({ code: 'custom', message: 'expected a non-empty event name this SDK does not know', input: body.event, path: ['event'] });
    }
    payload.value = { ...body, event: 'unknown', originalEvent: body.event } as typeof body;
  }),
) as never;

/**
 * A webhook event, as `verifyWebhook` checks it once the signature matched: the envelope (`event`, `created_at`,
 * `data`) of every event, and the data of `post.published`; an unknown event name gives an `UnknownWebhookEvent`.
 * Use it on an event you stored or forwarded; `verifyWebhook` already returns a checked one.
 *
 * @example
 * const event = WebhookEventSchema.parse(JSON.parse(storedBody))
 */
export const WebhookEventSchema = /* @__PURE__ */ z.union([
  PostScheduledEventSchema,
  PostPublishedEventSchema,
  PostFailedEventSchema,
  PostDeletedEventSchema,
  UnknownWebhookEventSchema,
]);

/**
 * The parsed body as an event (returned as sent; an unknown one renamed), or `invalid_event` naming the first field
 * that is wrong: "bad data.id".
 */
export function toWebhookEvent(body: unknown): WebhookEvent {
  const result = WebhookEventSchema.safeParse(body);
  if (result.success) return result.data.event === 'unknown' ? result.data : (body as KnownWebhookEvent);
  // The union's issue holds one list per member, in the order of WEBHOOK_EVENT_TYPES then the unknown event's: the
  // list of the member the event names tells what is wrong. (A plain union: `z.discriminatedUnion` costs 1 KB gz.)
  let issue = result.error.issues[0] as z.core.$ZodIssue;
  if (issue.code === 'invalid_union') {
    const known = KNOWN.indexOf((body as { event?: unknown }).event as string);
    issue = (issue.errors[known === -1 ? KNOWN.length : known] as z.core.$ZodIssue[])[0] as z.core.$ZodIssue;
  }
  reject('invalid_event', `Signed body is not an event: ${issue.path.length === 0 ? 'not an object' : `bad ${issue.path.join('.')}`}`);
}

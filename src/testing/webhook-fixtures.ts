/**
 * One sample body per webhook event (service spec §6), shaped as the fake service sends them: `data` is the
 * post as the service holds it (id, account_ids, publish_at, status…), plus `published_at` for `post.published`.
 * For a receiver's unit tests, without running the fake.
 */
import { signWebhook } from '../webhooks/index.js';
import type {
  PostDeletedEvent,
  PostFailedEvent,
  PostPublishedEvent,
  PostScheduledEvent,
  WebhookEventType,
} from '../webhooks/event.js';
import { WEBHOOK_SIGNATURE_HEADER } from '../webhooks/signature.js';

/** The sample event of each type, by event name. */
export interface WebhookFixtures {
  /** A `post.scheduled` event. */
  'post.scheduled': PostScheduledEvent;
  /** A `post.published` event, with `published_at`. */
  'post.published': PostPublishedEvent;
  /** A `post.failed` event. */
  'post.failed': PostFailedEvent;
  /** A `post.deleted` event. */
  'post.deleted': PostDeletedEvent;
}

/** Fields to change in a copy of a fixture: `data` is merged into the sample's data. */
export interface WebhookFixtureOverrides<E extends WebhookEventType> {
  /** Replaces the event's `created_at` (ISO 8601). */
  created_at?: string;
  /** Fields merged over the event's `data`. */
  data?: Partial<WebhookFixtures[E]['data']>;
}

const POST = {
  id: 'post_fixture_1',
  account_ids: ['acc_demo_x', 'acc_demo_linkedin'],
  publish_at: '2030-01-01T09:00:00.000Z',
  text: 'Hello from @postsched/sdk',
  created_at: '2030-01-01T08:00:00.000Z',
};

function build(): WebhookFixtures {
  return {
    'post.scheduled': {
      event: 'post.scheduled',
      created_at: '2030-01-01T08:00:00.000Z',
      data: { ...POST, account_ids: [...POST.account_ids], status: 'scheduled' },
    },
    'post.published': {
      event: 'post.published',
      created_at: '2030-01-01T09:00:00.000Z',
      data: { ...POST, account_ids: [...POST.account_ids], status: 'published', published_at: '2030-01-01T09:00:00.000Z' },
    },
    'post.failed': {
      event: 'post.failed',
      created_at: '2030-01-01T09:00:00.000Z',
      data: { ...POST, account_ids: [...POST.account_ids], status: 'failed' },
    },
    'post.deleted': {
      event: 'post.deleted',
      created_at: '2030-01-01T08:30:00.000Z',
      data: { ...POST, account_ids: [...POST.account_ids], status: 'deleted' },
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * A sample body of each event type, typed as `verifyWebhook` returns it. Frozen (shared by every test):
 * take a copy to change with {@link webhookFixture}.
 *
 * @example
 * import { webhookFixtures } from '@postsched/sdk/testing'
 * await handleEvent(webhookFixtures['post.published'])
 */
export const webhookFixtures: Readonly<WebhookFixtures> = deepFreeze(build());

/**
 * A fresh, mutable copy of the sample event `event`, with `overrides` applied (`data` fields merged).
 *
 * @example
 * const event = webhookFixture('post.failed', { data: { id: 'post_42' } })
 */
export function webhookFixture<E extends WebhookEventType>(event: E, overrides: WebhookFixtureOverrides<E> = {}): WebhookFixtures[E] {
  const sample = build()[event];
  if (sample === undefined) {
    throw new TypeError(`webhookFixture: unknown event type "${String(event)}"; use one of ${Object.keys(build()).join(', ')}`);
  }
  return {
    ...sample,
    ...(overrides.created_at === undefined ? {} : { created_at: overrides.created_at }),
    data: { ...sample.data, ...overrides.data },
  } as WebhookFixtures[E];
}

/** A signed delivery, ready to POST to your receiver. */
export interface SignedWebhookDelivery {
  /** The raw JSON body, exactly as signed. */
  body: string;
  /** `content-type` and `x-service-signature`. */
  headers: Record<string, string>;
}

/**
 * The sample event `event` (or any event object) as the service would deliver it: serialized and signed with
 * `secret` at `timestamp` (default now), for tests of your webhook route.
 *
 * @example
 * const { body, headers } = await signedWebhookDelivery('post.published', { secret: 'whsec_test' })
 * const res = await fetch('http://127.0.0.1:3000/webhooks/postsched', { method: 'POST', body, headers })
 * expect(res.status).toBe(204)
 */
export async function signedWebhookDelivery(
  event: WebhookEventType | WebhookFixtures[WebhookEventType],
  options: { secret: string; timestamp?: number | Date },
): Promise<SignedWebhookDelivery> {
  const body = JSON.stringify(typeof event === 'string' ? webhookFixture(event) : event);
  const signature = await signWebhook({ body, secret: options.secret, timestamp: options.timestamp });
  return { body, headers: { 'content-type': 'application/json', [WEBHOOK_SIGNATURE_HEADER]: signature } };
}

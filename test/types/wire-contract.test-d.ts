/**
 * Type tests, checked by `npm run typecheck` (tsc; test/types/typecheck.test.ts proves tsc reads this file).
 * An `@ts-expect-error` line whose error disappears fails tsc ("unused directive"), and so does a wrong
 * `expectTypeOf`. Nothing here runs.
 */
import { expectTypeOf } from 'vitest';
import type {
  Account,
  MediaItem,
  Page,
  Post,
  PostAnalytics,
  PostCreateParams,
  PostSched,
  PostStatus,
  PostStatusFilter,
  PostUpdateParams,
} from '@postsched/sdk';
import type {
  AccountSchema,
  CreatePostParamsSchema,
  MediaItemSchema,
  PostAnalyticsSchema,
  PostSchema,
  UpdatePostParamsSchema,
} from '@postsched/sdk';
import type {
  PostDeletedEvent,
  PostDeletedEventSchema,
  PostFailedEvent,
  PostFailedEventSchema,
  PostPublishedData,
  PostPublishedDataSchema,
  PostPublishedEvent,
  PostPublishedEventSchema,
  PostScheduledEvent,
  PostScheduledEventSchema,
  UnknownWebhookEvent,
  UnknownWebhookEventSchema,
  WebhookEvent,
  WebhookEventSchema,
  WebhookPostData,
  WebhookPostDataSchema,
} from '@postsched/sdk/webhooks';
import type * as z from 'zod/mini';
import type { inputs } from '../../src/resources/wire-contract.js';

declare const client: PostSched;
declare const post: Post;
declare const account: Account;
declare const media: MediaItem;
declare const analytics: PostAnalytics;
declare const publishAt: Date;

export async function typosDoNotCompile(): Promise<void> {
  // @ts-expect-error `publishAt` is not a field: the wire name is `publish_at`.
  await client.posts.update('post_1', { publishAt });
  // @ts-expect-error `txt` is not a field of a post.
  await client.posts.create({ account_ids: ['acc_1'], publish_at: publishAt, txt: 'hi' });
  // @ts-expect-error `idempotencyKey` is a request option, not a field of the post.
  await client.posts.create({ account_ids: ['acc_1'], publish_at: publishAt, idempotencyKey: 'k' });
  // @ts-expect-error the status filter takes the four known values.
  client.posts.list({ status: 'schedulled' });
  // @ts-expect-error `cursor` is the SDK's business (pagination), not a list param.
  client.accounts.list({ cursor: 'c' });
  // @ts-expect-error `name` is not a field of an upload (the file name is `filename`).
  await client.media.upload({ file: new Uint8Array(1), name: 'a.png' });
  // @ts-expect-error `extraBody` applies to calls with a body.
  await client.posts.get('post_1', { extraBody: { a: 1 } });
  // @ts-expect-error account_ids is an array of ids.
  await client.posts.create({ account_ids: 'acc_1', publish_at: publishAt });
}

export async function theEscapeHatchCompiles(): Promise<void> {
  await client.posts.create({ account_ids: ['acc_1'], publish_at: publishAt }, { idempotencyKey: 'k', extraBody: { txt: 'hi' } });
  await client.posts.update('post_1', { text: 'x' }, { extraBody: { publishAt } });
  client.posts.list({ status: 'scheduled' }, { extraQuery: { status: 'queued_for_review', include_deleted: true } });
  await client.media.upload({ file: new Uint8Array(1) }, { extraBody: { alt_text: 'A bike' } });
}

// Reading a spec-given field gives its type; an assumed one gives `T | undefined`.
expectTypeOf(post.id).toEqualTypeOf<string>();
expectTypeOf(post.account_ids).toEqualTypeOf<string[]>();
expectTypeOf(post.status).toEqualTypeOf<PostStatus | undefined>();
expectTypeOf(post.publish_at).toEqualTypeOf<string | undefined>();
expectTypeOf(post.created_at).toEqualTypeOf<string | undefined>();
expectTypeOf(post.media_ids).toEqualTypeOf<string[] | undefined>();
expectTypeOf(post['campaign']).toEqualTypeOf<unknown>();
expectTypeOf(account.id).toEqualTypeOf<string>();
expectTypeOf(account.platform).toEqualTypeOf<string | undefined>();
expectTypeOf(account.name).toEqualTypeOf<string | undefined>();
expectTypeOf(media.id).toEqualTypeOf<string | undefined>();
expectTypeOf(media.filename).toEqualTypeOf<string | undefined>();
expectTypeOf(media.size).toEqualTypeOf<number | undefined>();
expectTypeOf(analytics.impressions).toEqualTypeOf<number | undefined>();
expectTypeOf(analytics.post_id).toEqualTypeOf<string | undefined>();
expectTypeOf(client.posts.delete('post_1')).resolves.toEqualTypeOf<Post | undefined>();
expectTypeOf(client.posts.list().pages()).toEqualTypeOf<AsyncGenerator<Page<Post>, void, undefined>>();
expectTypeOf<PostStatusFilter>().toEqualTypeOf<'scheduled' | 'published' | 'failed' | 'deleted'>();

// The interfaces are the schemas' types (src/resources/wire-contract.ts, posts.ts): given fields required, assumed
// fields optional, unknown ones passed through.
expectTypeOf<z.output<typeof PostSchema>>().toEqualTypeOf<Post>();
expectTypeOf<z.output<typeof AccountSchema>>().toEqualTypeOf<Account>();
expectTypeOf<z.output<typeof MediaItemSchema>>().toEqualTypeOf<MediaItem>();
expectTypeOf<z.output<typeof PostAnalyticsSchema>>().toEqualTypeOf<PostAnalytics>();
expectTypeOf<z.output<typeof CreatePostParamsSchema>>().toEqualTypeOf<PostCreateParams>();
expectTypeOf<z.output<typeof UpdatePostParamsSchema>>().toEqualTypeOf<PostUpdateParams>();
type PostBodyField = (typeof inputs.postBody.given)[number] | (typeof inputs.postBody.assumed)[number];
expectTypeOf<keyof PostCreateParams>().toEqualTypeOf<PostBodyField>();
expectTypeOf<keyof PostUpdateParams>().toEqualTypeOf<PostBodyField>();

// The webhook events are their schemas' types (src/webhooks/event.ts).
expectTypeOf<z.output<typeof WebhookPostDataSchema>>().toEqualTypeOf<WebhookPostData>();
expectTypeOf<z.output<typeof PostPublishedDataSchema>>().toEqualTypeOf<PostPublishedData>();
expectTypeOf<z.output<typeof PostScheduledEventSchema>>().toEqualTypeOf<PostScheduledEvent>();
expectTypeOf<z.output<typeof PostPublishedEventSchema>>().toEqualTypeOf<PostPublishedEvent>();
expectTypeOf<z.output<typeof PostFailedEventSchema>>().toEqualTypeOf<PostFailedEvent>();
expectTypeOf<z.output<typeof PostDeletedEventSchema>>().toEqualTypeOf<PostDeletedEvent>();
expectTypeOf<z.output<typeof UnknownWebhookEventSchema>>().toEqualTypeOf<UnknownWebhookEvent>();
expectTypeOf<z.output<typeof WebhookEventSchema>>().toEqualTypeOf<WebhookEvent>();

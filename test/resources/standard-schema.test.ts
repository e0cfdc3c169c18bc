/**
 * The exported schemas, used as other libraries use them: through the Standard Schema interface
 * (`schema['~standard'].validate`), which form libraries, routers and queue validators call without knowing zod.
 */
import { describe, expect, it } from 'vitest';
import { AccountSchema, CreatePostParamsSchema, MediaItemSchema, PostAnalyticsSchema, PostSchema, UpdatePostParamsSchema } from '@postsched/sdk';
import { PostPublishedEventSchema, WebhookEventSchema } from '@postsched/sdk/webhooks';

/** The Standard Schema v1 interface (standardschema.dev), written out as a library that consumes it declares it. */
interface StandardSchemaV1 {
  readonly '~standard': { readonly version: 1; readonly vendor: string; readonly validate: (value: unknown) => Result | Promise<Result> };
}
type Result = { readonly value: unknown; readonly issues?: undefined } | { readonly issues: readonly Issue[] };
interface Issue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** What a consumer of Standard Schema does: validate, then read `value` or `issues`. */
async function validate(schema: StandardSchemaV1, value: unknown): Promise<Result> {
  expect(schema['~standard'].version).toBe(1);
  return schema['~standard'].validate(value);
}

describe('the schemas through Standard Schema', () => {
  it('are Standard Schema v1, vendor zod', () => {
    for (const schema of [PostSchema, AccountSchema, MediaItemSchema, PostAnalyticsSchema, CreatePostParamsSchema, UpdatePostParamsSchema, WebhookEventSchema]) {
      expect(schema['~standard'].vendor).toBe('zod');
    }
  });

  it('PostSchema: requires only what the spec gives, keeps assumed fields of another type and unknown fields', async () => {
    const post = { id: 'post_1', account_ids: ['acc_1'], status: 'queued_for_review', publish_at: null, campaign: { name: 'spring' } };
    expect(await validate(PostSchema, post)).toEqual({ value: post });
    const result = await validate(PostSchema, { id: 'post_1', account_ids: ['acc_1', 2] });
    expect(result.issues?.map((issue) => [issue.path, issue.message])).toEqual([[['account_ids', 1], 'expected string']]);
  });

  it('AccountSchema and MediaItemSchema: an account needs its id, a media item nothing', async () => {
    expect((await validate(AccountSchema, { name: 'Main' })).issues?.[0]?.path).toEqual(['id']);
    expect(await validate(MediaItemSchema, { size: 'big' })).toEqual({ value: { size: 'big' } });
  });

  it('CreatePostParamsSchema: says what is wrong with each field, as the SDK refuses it', async () => {
    const result = await validate(CreatePostParamsSchema, { account_ids: [], publish_at: '2030-01-01T09:00:00', text: 5 });
    const messages = Object.fromEntries(result.issues?.map((issue) => [String(issue.path?.[0]), issue.message]) ?? []);
    expect(messages['account_ids']).toBe('must name at least one account id.');
    expect(messages['publish_at']).toMatch(/must be a valid Date or an ISO 8601 date-time with a time zone.*atLocalTime/);
    expect(messages['text']).toBe('must be a string, got number.');
    expect((await validate(CreatePostParamsSchema, { account_ids: ['acc_1'], publish_at: new Date(), txt: 'hi' })).issues?.[0]).toMatchObject({ keys: ['txt'] });
    expect((await validate(UpdatePostParamsSchema, { text: 'Hello' })).issues).toBeUndefined();
  });

  it('WebhookEventSchema: checks the envelope and the data of post.published; an unknown event comes out as `unknown`', async () => {
    const published = { event: 'post.published', created_at: '2030-01-01T09:00:00Z', data: { id: 'post_1', account_ids: ['acc_1'], published_at: '2030-01-01T09:00:00Z' } };
    expect(await validate(WebhookEventSchema, published)).toEqual({ value: published });
    expect((await validate(PostPublishedEventSchema, { ...published, data: { id: 'post_1', account_ids: [] } })).issues?.[0]?.path).toEqual(['data', 'published_at']);
    const renamed = await validate(WebhookEventSchema, { event: 'post.boosted', created_at: 'x', data: { a: 1 } });
    expect(renamed).toEqual({ value: { event: 'unknown', originalEvent: 'post.boosted', created_at: 'x', data: { a: 1 } } });
    // A known event whose data is wrong is refused, not passed off as an unknown one.
    expect((await validate(WebhookEventSchema, { ...published, data: {} })).issues).toBeDefined();
  });
});

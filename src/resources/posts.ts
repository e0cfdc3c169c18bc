/**
 * Posts: schedule, read, change, cancel and list. Wire names (snake_case) as in the webhook data; unknown
 * fields pass through both ways (Assumptions table, "Field names").
 */
import * as z from 'zod/mini';
import type { APIPromise } from '../http/api-promise.js';
import type { Pipeline, RequestOptions, WriteRequestOptions } from '../http/request.js';
import { pageSchema, Paginator, type ListParams, type Page } from './pagination.js';
import { routes } from './routes.js';
import { checkInput, responseParser } from './validate.js';

/** Known statuses; an unknown one is kept as a string, not rejected (Assumptions table, "Post status values"). */
export type PostStatus = 'scheduled' | 'published' | 'failed' | 'deleted' | (string & {});

/** A post, as the service returns it. Fields the SDK does not know are kept. */
export interface Post {
  /** `post_…` */
  id: string;
  /** The accounts the post is published to. */
  account_ids: string[];
  /** ISO 8601 UTC. */
  publish_at: string;
  /** Where the post is in its life: `scheduled`, then `published` or `failed`; `deleted` once cancelled. */
  status: PostStatus;
  /** The post's text. */
  text?: string;
  /** Uploaded media attached to the post (ids from `media.upload`). */
  media_ids?: string[];
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC; set once published. */
  published_at?: string;
  [field: string]: unknown;
}

/** What `posts.create` takes. Fields beyond these are sent as given. */
export interface PostCreateParams {
  /** The accounts to publish to: at least one id. */
  account_ids: string[];
  /** When to publish: a `Date` or an ISO 8601 string with a time zone; sent as ISO 8601 UTC. */
  publish_at: Date | string;
  /** The post's text. */
  text?: string;
  /** Ids of uploaded media (from `media.upload`) to attach. */
  media_ids?: string[];
  [field: string]: unknown;
}

/** What `posts.update` takes: any of the create fields. Only a scheduled post can change (else 409). */
export interface PostUpdateParams {
  /** The new target accounts: at least one id. */
  account_ids?: string[];
  /** The new publication time: a `Date` or an ISO 8601 string with a time zone. */
  publish_at?: Date | string;
  /** The new text. */
  text?: string;
  /** The new set of attached media ids. */
  media_ids?: string[];
  [field: string]: unknown;
}

/** What `posts.list` takes. */
export interface PostListParams extends ListParams {
  /** Only posts in this status. */
  status?: PostStatus;
}

// Module-level schemas are built in `/* @__PURE__ */` IIFEs: the build puts the SDK in one chunk, and this lets a
// user's bundler drop them when this resource is not imported (see inspectAs in oauth/inspect.ts).
// The shape answers are checked against (zod/mini): required known fields, unknown fields kept.
const PostSchema = /* @__PURE__ */ (() => z.looseObject({
  id: z.string(),
  account_ids: z.array(z.string()),
  publish_at: z.string(),
  status: z.string(),
  text: z.optional(z.string()),
  media_ids: z.optional(z.array(z.string())),
  created_at: z.string(),
  published_at: z.optional(z.string()),
}))();

// z.refine (the z.custom machinery, already in the bundle for publish_at) rather than z.minLength: same checks.
const accountIds = /* @__PURE__ */ (() => z.array(z.string().check(z.refine((id) => id !== '', { error: 'must be a non-empty account id' })), {
  error: 'must be an array of account ids',
}).check(z.refine((ids) => ids.length > 0, { error: 'must name at least one account' })))();

// RFC 3339 date-time with seconds and a zone (Z or ±hh:mm): a time without a zone would be read in the local zone.
// A hand-written check, not z.union([z.date(), z.iso.datetime()]): those two pull ~2 KB of zod (the union
// machinery and its calendar regex) into every bundle for this one field.
const ISO_DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

function isPublishAt(value: unknown): value is Date | string {
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  const match = typeof value === 'string' ? ISO_DATE_TIME.exec(value) : null;
  if (match === null) return false;
  // The calendar check (no 31 April, 29 February only in leap years), as a round trip through Date.
  const day = new Date(0);
  day.setUTCFullYear(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return day.getUTCMonth() === Number(match[2]) - 1 && day.getUTCDate() === Number(match[3]);
}

const publishAt = /* @__PURE__ */ (() => z.custom<Date | string>(isPublishAt, {
  error: 'must be a valid Date or an ISO 8601 date-time with a time zone, such as "2025-06-01T09:30:00Z"',
}))();

const CreateInput = /* @__PURE__ */ (() => z.looseObject(
  { account_ids: accountIds, publish_at: publishAt },
  { error: 'pass an object such as { account_ids: ["acc_1"], publish_at: new Date(…) }' },
))();
const UpdateInput = /* @__PURE__ */ (() => z.looseObject(
  { account_ids: z.optional(accountIds), publish_at: z.optional(publishAt) },
  { error: 'pass an object with the fields to change' },
))();

const parsePost = /* @__PURE__ */ (() => responseParser<Post>(PostSchema, 'a post'))();
const parsePostPage = /* @__PURE__ */ (() => responseParser<Page<Post>>(pageSchema(PostSchema), 'a page of posts'))();

/**
 * `client.posts`: schedule, read, change, cancel and list posts.
 *
 * @example
 * const post = await client.posts.create({ account_ids: ['acc_1'], publish_at: new Date(Date.now() + 3_600_000), text: 'Hi' })
 * await client.posts.update(post.id, { text: 'Hello' })
 */
export class Posts {
  readonly #pipeline: Pipeline;

  /** Built by `PostSched`; use `client.posts`. @internal */
  constructor(pipeline: Pipeline) {
    this.#pipeline = pipeline;
  }

  /**
   * Schedules a post. Bad input (`ValidationError` naming the field) rejects the promise before anything is sent. Without `idempotencyKey` it is never sent twice (a 5xx is not retried); with one, it
   * is retried safely and the service answers a repeat with the same post.
   *
   * @example
   * const post = await client.posts.create(
   *   { account_ids: ['acc_1'], publish_at: new Date('2025-06-01T09:30:00Z'), text: 'Hello' },
   *   { idempotencyKey: crypto.randomUUID() },
   * )
   */
  create(params: PostCreateParams, options?: WriteRequestOptions): APIPromise<Post> {
    return this.#pipeline.request(() => {
      checkInput(CreateInput, params);
      const json = { ...params, publish_at: toUtc(params.publish_at) };
      return { ...routes.createPost(), json, parse: parsePost, options };
    });
  }

  /**
   * A post by id; a deleted post is still returned, with status `deleted`.
   *
   * @example
   * const post = await client.posts.get('post_1')
   */
  get(id: string, options?: RequestOptions): APIPromise<Post> {
    return this.#pipeline.request(() => ({ ...routes.getPost(id), parse: parsePost, options }));
  }

  /**
   * Changes a scheduled post (a published, failed or deleted one answers 409: `ConflictError`).
   *
   * @example
   * await client.posts.update('post_1', { text: 'Hello again', publish_at: '2025-06-02T09:30:00Z' })
   */
  update(id: string, params: PostUpdateParams, options?: WriteRequestOptions): APIPromise<Post> {
    return this.#pipeline.request(() => {
      const route = routes.updatePost(id);
      checkInput(UpdateInput, params);
      const json = params.publish_at === undefined ? params : { ...params, publish_at: toUtc(params.publish_at) };
      return { ...route, json, parse: parsePost, options };
    });
  }

  /**
   * Cancels a scheduled post; returns it with status `deleted` (a published or failed post: `ConflictError`).
   *
   * @example
   * const cancelled = await client.posts.delete('post_1')
   */
  delete(id: string, options?: RequestOptions): APIPromise<Post> {
    return this.#pipeline.request(() => ({ ...routes.deletePost(id), parse: parsePost, options }));
  }

  /**
   * Posts, newest pages fetched lazily as the loop goes.
   *
   * @example
   * for await (const post of client.posts.list({ status: 'scheduled', limit: 50 })) console.log(post.id)
   */
  list(params: PostListParams = {}, options?: RequestOptions): Paginator<Post> {
    const { status, limit, pageSize } = params;
    const route = routes.listPosts();
    return new Paginator<Post>(
      (query, opts) => this.#pipeline.request({ ...route, query: { ...query, status }, parse: parsePostPage, options: opts }),
      { ...(limit === undefined ? {} : { limit }), ...(pageSize === undefined ? {} : { pageSize }) },
      options,
    );
  }
}

/** ISO 8601 UTC, as the service stores it (validated before). */
function toUtc(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

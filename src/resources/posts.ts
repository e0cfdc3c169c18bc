/**
 * Posts: schedule, read, change, cancel and list. Wire names (snake_case) as in the webhook data. Answers: only
 * `id` and `account_ids` are given by the spec and required; every other field is assumed (wire-contract.ts).
 * Inputs: known fields only (typed and checked); others go through `extraBody` / `extraQuery`.
 */
import { parseDateTime } from '../core/date-time.js';
import type { APIPromise } from '../http/api-promise.js';
import type { RequestOptions, WriteRequestOptions } from '../http/options.js';
import type { Pipeline } from '../http/request.js';
import { listShape, pageParser, Paginator, type ListParams } from './pagination.js';
import { routes, withParse } from './routes.js';
import * as z from 'zod/mini';
import { answerParser, checkInput, idList, inputObject, inputString, oneOf, type InputShape } from './validate.js';
import { PostSchema, type PostStatus } from './wire-contract.js';

export type { PostStatus } from './wire-contract.js';

/**
 * The four statuses `posts.list` filters on. Another value the service supports goes through the escape hatch:
 * `client.posts.list({}, { extraQuery: { status: 'queued' } })`.
 */
export type PostStatusFilter = 'scheduled' | 'published' | 'failed' | 'deleted';

/** The statuses `posts.list` filters on, for checks and tools. @internal */
export const STATUS_FILTERS = ['scheduled', 'published', 'failed', 'deleted'] as const satisfies readonly PostStatusFilter[];

/**
 * A post, as the service returns it. `id` and `account_ids` are given by the spec and always there; every other
 * field is our assumption about the service: it may be absent, and a value of another type (or `null`) is kept as
 * the service sent it. Fields the SDK does not know are kept too.
 */
export interface Post {
  /** `post_…` (spec §2). */
  id: string;
  /** The accounts the post is published to (spec §2). */
  account_ids: string[];
  /** Assumed. ISO 8601 UTC. */
  publish_at?: string | undefined;
  /** Assumed. Where the post is in its life: `scheduled`, then `published` or `failed`; `deleted` once cancelled. */
  status?: PostStatus | undefined;
  /** Assumed. The post's text. */
  text?: string | undefined;
  /** Assumed. Uploaded media attached to the post (ids from `media.upload`). */
  media_ids?: string[] | undefined;
  /** Assumed. ISO 8601 UTC. */
  created_at?: string | undefined;
  /** Assumed. ISO 8601 UTC; set once published. */
  published_at?: string | undefined;
  [field: string]: unknown;
}

/**
 * What `posts.create` takes. Only these fields: a field the SDK does not know goes in the request options,
 * `{ extraBody: { campaign: 'spring' } }`.
 */
export interface PostCreateParams {
  /** The accounts to publish to: at least one id. */
  account_ids: string[];
  /** When to publish: a `Date` or an ISO 8601 string with a time zone; sent as ISO 8601 UTC. */
  publish_at: Date | string;
  /** The post's text. */
  text?: string | undefined;
  /** Ids of uploaded media (from `media.upload`) to attach. */
  media_ids?: string[] | undefined;
}

/** What `posts.update` takes: any of the create fields. Only a scheduled post can change (else 409). */
export interface PostUpdateParams {
  /** The new target accounts: at least one id. */
  account_ids?: string[] | undefined;
  /** The new publication time: a `Date` or an ISO 8601 string with a time zone. */
  publish_at?: Date | string | undefined;
  /** The new text. */
  text?: string | undefined;
  /** The new set of attached media ids. */
  media_ids?: string[] | undefined;
}

/** What `posts.list` takes. */
export interface PostListParams extends ListParams {
  /** Only posts in this status (another value: `extraQuery`, see `PostStatusFilter`). */
  status?: PostStatusFilter;
}

// RFC 3339 date-time with seconds and a zone (Z or ±hh:mm): a time without a zone would be read in the local zone.
function isPublishAt(value: unknown): value is Date | string {
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  return typeof value === 'string' && parseDateTime(value) !== undefined;
}

/** What is wrong with a `publish_at` value. */
function publishAtProblem(value: unknown): string {
  // The example is made when the error is, so that a copied one is never already in the past.
  // A wall time without a zone is what a date picker gives: point at the conversion that needs the user's zone.
  const wall = typeof value === 'string' && /^[\d-]{10}T[\d:.]{5,12}$/.test(value) ? ` For a wall time, use atLocalTime("${value}", "Europe/Berlin") from @postsched/sdk/schedule.` : '';
  return `must be a valid Date or an ISO 8601 date-time with a time zone, such as "${tomorrowAt0930()}".${wall}`;
}

/** "2031-06-02T09:30:00Z": tomorrow at 09:30 UTC. */
function tomorrowAt0930(): string {
  const day = new Date(Date.now() + 86_400_000);
  day.setUTCHours(9, 30, 0, 0);
  return day.toISOString().replace('.000Z', 'Z');
}

/** The accounts to publish to: at least one id. */
const accountIds = /* @__PURE__ */ idList('account id', true);
/** When to publish: a `Date` or an ISO 8601 string with a time zone. */
const publishAt = /* @__PURE__ */ z.custom<Date | string>(isPublishAt, { error: (issue) => publishAtProblem(issue.input) });
/** The post's text. */
const postText = /* @__PURE__ */ z.optional(/* @__PURE__ */ inputString());
/** Ids of uploaded media to attach. */
const mediaIds = /* @__PURE__ */ z.optional(/* @__PURE__ */ idList('media id', false));

/**
 * What `posts.create` takes: `account_ids` (at least one id) and `publish_at` (a `Date` or an ISO 8601 date-time
 * with a time zone) required, `text` and `media_ids` optional, no other field (those go in `extraBody`). A time in
 * the past or a text too long is for the service to judge: its 422 names the field. The schema behind
 * `PostCreateParams`; each issue's message says what is wrong with the field.
 */
export const CreatePostParamsSchema = /* @__PURE__ */ inputObject({
  /** The accounts to publish to: at least one id. */
  account_ids: accountIds,
  /** When to publish: a `Date` or an ISO 8601 string with a time zone. */
  publish_at: publishAt,
  /** The post's text. */
  text: postText,
  /** Ids of uploaded media to attach. */
  media_ids: mediaIds,
});

/**
 * What `posts.update` takes: any of the fields of `CreatePostParamsSchema`, none required. The schema behind
 * `PostUpdateParams`. (Written out: `z.partial(CreatePostParamsSchema)` adds 0.45 KB gz of zod to every bundle.)
 */
export const UpdatePostParamsSchema = /* @__PURE__ */ inputObject({
  /** The accounts to publish to: at least one id. */
  account_ids: /* @__PURE__ */ z.optional(accountIds),
  /** When to publish: a `Date` or an ISO 8601 string with a time zone. */
  publish_at: /* @__PURE__ */ z.optional(publishAt),
  /** The post's text. */
  text: postText,
  /** Ids of uploaded media to attach. */
  media_ids: mediaIds,
});

const createShape: InputShape = { call: 'posts.create', schema: CreatePostParamsSchema, escapeHatch: 'extraBody' };
const updateShape: InputShape = { call: 'posts.update', schema: UpdatePostParamsSchema, escapeHatch: 'extraBody' };
const listPostsShape = /* @__PURE__ */ listShape('posts.list', {
  status: /* @__PURE__ */ z.optional(/* @__PURE__ */ oneOf(STATUS_FILTERS, 'For another value use `{ extraQuery: { status } }` in the request options.')),
});

const parsePost = /* @__PURE__ */ answerParser<Post>('a post', PostSchema);
/**
 * What a DELETE answered (not shown by the spec): the post, or `undefined` for no body or a body that is not a post
 * (`{}`, `{ "deleted": true }`). A 2xx means the post was cancelled: an answer of another shape must not make it
 * look failed.
 */
const parseDeleted = (body: unknown): Post | undefined => {
  try {
    return body === undefined ? undefined : parsePost(body);
  } catch {
    return undefined;
  }
};
const parsePostPage = /* @__PURE__ */ pageParser<Post>('a page of posts', PostSchema);

/**
 * `client.posts`: schedule, read, change, cancel and list posts.
 *
 * @example
 * const post = await client.posts.create({ account_ids: ['acc_1'], publish_at: new Date(Date.now() + 3_600_000), text: 'Hi' })
 * await client.posts.update(post.id, { text: 'Hello' })
 */
export class Posts {
  readonly #pipeline: Pipeline;

  /** Not for you to build (the declarations say so: `new Posts()` does not compile): use `client.posts`. */
  private constructor(pipeline: Pipeline) {
    this.#pipeline = pipeline;
  }

  /** Built by `PostSched`. @internal */
  static create(pipeline: Pipeline): Posts {
    return new Posts(pipeline);
  }

  /**
   * Schedules a post. Bad input (`ValidationError` naming the field) rejects the promise before anything is sent:
   * a field the SDK does not know included, which goes in `{ extraBody }` instead. Without `idempotencyKey` it is
   * never sent twice (a 5xx is not retried); with one, it is retried safely and the service answers a repeat with
   * the same post.
   *
   * @example
   * const post = await client.posts.create(
   *   { account_ids: ['acc_1'], publish_at: new Date(Date.now() + 24 * 3_600_000), text: 'Hello' },
   *   { idempotencyKey: crypto.randomUUID() },
   * )
   */
  create(params: PostCreateParams, options?: WriteRequestOptions): APIPromise<Post> {
    return this.#pipeline.request(() => {
      checkInput(params, createShape);
      return { ...routes.createPost(), json: { ...params, publish_at: toUtc(params.publish_at) }, parse: parsePost, options };
    });
  }

  /**
   * A post by id; a deleted post is still returned, with status `deleted`.
   *
   * @example
   * const post = await client.posts.get('post_1')
   */
  get(id: string, options?: RequestOptions): APIPromise<Post> {
    return this.#pipeline.request(() => withParse(routes.getPost(id), parsePost, options));
  }

  /**
   * Changes a scheduled post (a published, failed or deleted one answers 409: `ConflictError`).
   *
   * @example
   * await client.posts.update('post_1', { text: 'Hello again', publish_at: new Date(Date.now() + 48 * 3_600_000) })
   */
  update(id: string, params: PostUpdateParams, options?: WriteRequestOptions): APIPromise<Post> {
    return this.#pipeline.request(() => {
      const route = routes.updatePost(id);
      checkInput(params, updateShape);
      const json = params.publish_at === undefined ? { ...params } : { ...params, publish_at: toUtc(params.publish_at) };
      return { ...route, json, parse: parsePost, options };
    });
  }

  /**
   * Cancels a scheduled post (a published or failed post: `ConflictError`). Resolves to the post as the service
   * returns it (status `deleted`), or to `undefined` when the service answers without a body (204 No Content) or
   * with one that is not a post (the post was cancelled all the same; `.withResponse()` has the answer).
   *
   * @example
   * const cancelled = await client.posts.delete('post_1')
   * console.log(cancelled?.status) // 'deleted', or undefined after a 204
   */
  delete(id: string, options?: RequestOptions): APIPromise<Post | undefined> {
    return this.#pipeline.request(() => withParse(routes.deletePost(id), parseDeleted, options));
  }

  /**
   * Posts, newest pages fetched lazily as the loop goes.
   *
   * @example
   * for await (const post of client.posts.list({ status: 'scheduled', limit: 50 })) console.log(post.id)
   */
  list(params: PostListParams = {}, options?: RequestOptions): Paginator<Post> {
    checkInput(params, listPostsShape);
    const { status, limit, pageSize } = params;
    const route = routes.listPosts();
    return Paginator.create<Post>(
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

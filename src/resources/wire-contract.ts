/**
 * The wire contract, in one place: a zod/mini schema per answer (../shared/spec/service-spec.md §2 and §6;
 * assumptions.md "Field names beyond the known ones"). The resources parse their answers with these schemas, the
 * fake's wire profiles (src/testing) read which fields are given, and docs/assumptions.md's table is generated from
 * them (test/support/assumptions-table.ts).
 *
 * - given: shown by the spec. Required; a missing one, or one of another type, fails the schema at its path.
 * - assumed (`assumed(…)`): our guess at a name and type. Optional, and never refused: absent, `null` or of another
 *   type, the value is kept as the service sent it. The type states what we expect, so read it with care.
 * - Objects are loose: fields the SDK does not know pass through.
 *
 * Each issue's message is "expected <type>", which `ResponseValidationError` completes with the path and what was
 * received (validate.ts).
 */
import * as z from 'zod/mini';
import { assumed, count, text, texts, wireObject as answer } from '../core/wire-schema.js';

/** Known statuses; an unknown one is kept as a string, not rejected (Assumptions table, "Post status values"). */
export type PostStatus = 'scheduled' | 'published' | 'failed' | 'deleted' | (string & {});

/**
 * A post, as the service returns it (spec §2: `id` and `account_ids` required; every other field assumed, optional
 * and kept as sent). The schema behind `Post`: parse a stored or forwarded post with it.
 *
 * @example
 * const post = PostSchema.parse(JSON.parse(text))
 */
export const PostSchema = /* @__PURE__ */ answer({
  /** `post_…` (spec §2). */
  id: /* @__PURE__ */ text(),
  /** The accounts the post is published to (spec §2). */
  account_ids: /* @__PURE__ */ texts(),
  /** Assumed. ISO 8601 UTC. */
  publish_at: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
  /** Assumed. `scheduled`, `published`, `failed` or `deleted`; another value is kept. */
  status: /* @__PURE__ */ assumed(/* @__PURE__ */ text() as z.ZodMiniType<PostStatus, PostStatus>),
  /** Assumed. The post's text. */
  text: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
  /** Assumed. Uploaded media attached to the post. */
  media_ids: /* @__PURE__ */ assumed(/* @__PURE__ */ texts()),
  /** Assumed. ISO 8601 UTC. */
  created_at: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
  /** Assumed. ISO 8601 UTC; set once published. */
  published_at: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
});

/**
 * A connected social account (spec §2: `id` required; `platform` and `name` assumed). The schema behind `Account`.
 */
export const AccountSchema = /* @__PURE__ */ answer({
  /** `acc_…` (spec §2). */
  id: /* @__PURE__ */ text(),
  /** Assumed. The social network. */
  platform: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
  /** Assumed. The account's display name. */
  name: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
});

/**
 * An uploaded file. The spec shows none of its fields: any JSON object passes. The schema behind `MediaItem`.
 */
export const MediaItemSchema = /* @__PURE__ */ answer({
  /** Assumed. `media_…`. */
  id: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
  /** Assumed. The file name sent with the upload. */
  filename: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
  /** Assumed. The MIME type sent with the upload. */
  content_type: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
  /** Assumed. Bytes. */
  size: /* @__PURE__ */ assumed(/* @__PURE__ */ count()),
  /** Assumed. ISO 8601 UTC. */
  created_at: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
});

/**
 * The counters of one post. The spec shows none of its fields: any JSON object passes. The schema behind
 * `PostAnalytics`.
 */
export const PostAnalyticsSchema = /* @__PURE__ */ answer({
  /** Assumed. The post these counters belong to. */
  post_id: /* @__PURE__ */ assumed(/* @__PURE__ */ text()),
  /** Assumed. Times the post was shown. */
  impressions: /* @__PURE__ */ assumed(/* @__PURE__ */ count()),
  /** Assumed. Likes. */
  likes: /* @__PURE__ */ assumed(/* @__PURE__ */ count()),
  /** Assumed. Shares, reposts or boosts. */
  shares: /* @__PURE__ */ assumed(/* @__PURE__ */ count()),
  /** Assumed. Replies and comments. */
  comments: /* @__PURE__ */ assumed(/* @__PURE__ */ count()),
  /** Assumed. Clicks on the post's links. */
  clicks: /* @__PURE__ */ assumed(/* @__PURE__ */ count()),
});

/**
 * The list envelope (assumptions.md "Pagination") around items of `item`: `data` is assumed, yet a page without it
 * cannot be used, so it is required; `next_cursor` is read by the paginator whatever its type.
 */
export function pageSchema<T>(item: z.ZodMiniType<T, unknown>) {
  return answer({
    data: z.array(item, { error: 'expected array' }),
    next_cursor: assumed(/* @__PURE__ */ text()),
  });
}

/** The answers, by name: what the fake's wire profiles and the docs' table read. */
export const answers = {
  post: PostSchema,
  account: AccountSchema,
  mediaItem: MediaItemSchema,
  postAnalytics: PostAnalyticsSchema,
} as const;

/** A field's JSON type as the contract states it. */
export type WireType = 'string' | 'number' | 'string[]' | 'array' | 'object' | 'unknown';

/** The fields of one answer schema: the given (required) ones and the assumed (optional) ones, with their types. */
export interface AnswerFields {
  readonly given: Readonly<Record<string, WireType>>;
  readonly assumed: Readonly<Record<string, WireType>>;
}

/** Reads the given and assumed fields of a loose object schema of this module. */
export function fieldsOf(schema: z.ZodMiniType): AnswerFields {
  const shape = (schema as unknown as z.ZodMiniObject).def.shape;
  const given: Record<string, WireType> = {};
  const assumedFields: Record<string, WireType> = {};
  for (const [name, field] of Object.entries(shape)) {
    // An assumed field is `optional(union([schema, unknown]))` (src/core/wire-schema.ts).
    const def = (field as z.ZodMiniType)._zod.def;
    const inner = def.type === 'optional' ? (def as z.core.$ZodOptionalDef).innerType._zod.def : undefined;
    if (inner?.type === 'union') assumedFields[name] = wireType((inner as z.core.$ZodUnionDef).options[0] as z.core.SomeType);
    else given[name] = wireType(field as z.ZodMiniType);
  }
  return { given, assumed: assumedFields };
}

function wireType(schema: z.core.SomeType): WireType {
  const def = schema._zod.def;
  if (def.type === 'optional') return wireType((def as z.core.$ZodOptionalDef).innerType);
  if (def.type === 'string' || def.type === 'number' || def.type === 'object') return def.type;
  if (def.type === 'array') return wireType((def as z.core.$ZodArrayDef).element) === 'string' ? 'string[]' : 'array';
  return 'unknown';
}

/** The fields of one input: all sent under wire names; `given` names come from the spec. */
export interface InputContract {
  /** Field names the spec shows. */
  readonly given: readonly string[];
  /** Field names we assumed. */
  readonly assumed: readonly string[];
}

/**
 * Inputs. The routes themselves are assumed (routes.ts); `account_ids` is the spec's name for a post's target
 * accounts (§2, webhook data), every other name is ours. Their schemas are in posts.ts, pagination.ts and media.ts.
 */
export const inputs = {
  postBody: { given: ['account_ids'], assumed: ['publish_at', 'text', 'media_ids'] },
  postListQuery: { given: [], assumed: ['status', 'limit', 'cursor'] },
  accountListQuery: { given: [], assumed: ['limit', 'cursor'] },
  mediaUploadForm: { given: [], assumed: ['file'] },
} as const satisfies Record<string, InputContract>;

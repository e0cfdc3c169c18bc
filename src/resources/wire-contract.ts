/**
 * The wire contract, in one place: for each answer and each input, which fields the service spec gives and which
 * are our assumptions (../shared/spec/service-spec.md §2 and §6; assumptions.md "Field names beyond the known ones").
 *
 * - `given`: shown by the spec. Required in answers and checked at run time; a missing one, or one of another
 *   type, is a `ResponseValidationError` naming its path.
 * - `needed`: assumed, but an answer without it cannot be used at all (a page without its items).
 * - `assumed`: our guess at a name and type. Optional in the types and never checked: absent, `null` or of
 *   another type, the value is kept on the object as the service sent it.
 *
 * The response checks (validate.ts), the fake's wire profiles (src/testing) and the README's Assumptions table
 * (checked by test/resources/wire-contract.test.ts) all read this module; the TypeScript interfaces beside each
 * resource are checked against it by test/types/wire-contract.test-d.ts.
 */

/** A field's JSON type as the contract states it. */
export type WireType = 'string' | 'number' | 'string[]' | 'array';

/** The fields of one answer. */
export interface AnswerContract {
  /** Shown by the spec: required, checked. */
  readonly given: Readonly<Record<string, WireType>>;
  /** Assumed, yet the answer cannot be used without it: required, checked. */
  readonly needed?: Readonly<Record<string, WireType>>;
  /** Assumed: optional, kept as sent whatever its type. */
  readonly assumed: Readonly<Record<string, WireType>>;
}

/** The fields of one input: all sent under wire names; `given` names come from the spec. */
export interface InputContract {
  /** Field names the spec shows. */
  readonly given: readonly string[];
  /** Field names we assumed. */
  readonly assumed: readonly string[];
}

/**
 * Answers. Spec §2: a post has an identifier (string) and a set of target account identifiers, named `id` and
 * `account_ids` (array of strings) in the webhook data; an account has an identifier (string). "Post fields beyond
 * these, and all fields of account, media item and analytics: not shown."
 */
export const answers = {
  post: {
    given: { id: 'string', account_ids: 'string[]' },
    assumed: {
      publish_at: 'string',
      status: 'string',
      text: 'string',
      media_ids: 'string[]',
      created_at: 'string',
      published_at: 'string',
    },
  },
  account: {
    given: { id: 'string' },
    assumed: { platform: 'string', name: 'string' },
  },
  mediaItem: {
    given: {},
    assumed: { id: 'string', filename: 'string', content_type: 'string', size: 'number', created_at: 'string' },
  },
  postAnalytics: {
    given: {},
    assumed: { post_id: 'string', impressions: 'number', likes: 'number', shares: 'number', comments: 'number', clicks: 'number' },
  },
  /** The list envelope (assumptions.md "Pagination"). A bare JSON array is read as one last page. */
  page: {
    given: {},
    needed: { data: 'array' },
    assumed: { next_cursor: 'string' },
  },
} as const satisfies Record<string, AnswerContract>;

/**
 * Inputs. The routes themselves are assumed (routes.ts); `account_ids` is the spec's name for a post's target
 * accounts (§2, webhook data), every other name is ours.
 */
export const inputs = {
  postBody: { given: ['account_ids'], assumed: ['publish_at', 'text', 'media_ids'] },
  postListQuery: { given: [], assumed: ['status', 'limit', 'cursor'] },
  accountListQuery: { given: [], assumed: ['limit', 'cursor'] },
  mediaUploadForm: { given: [], assumed: ['file'] },
} as const satisfies Record<string, InputContract>;

/**
 * The webhook event data (spec §2 and §6): given for `post.published`, and checked there by
 * `@postsched/sdk/webhooks` (src/webhooks), which imports nothing from here so that entry stays small. Listed so
 * this module states the whole contract.
 */
export const webhookData = {
  /** Shown for `post.published` only (§6: "Data fields for events other than post.published: not shown"). */
  givenFor: 'post.published',
  given: { id: 'string', account_ids: 'string[]', published_at: 'string' },
  /** Typed on the other known events, but not checked: their data comes back as sent. */
  assumedElsewhere: { id: 'string', account_ids: 'string[]' },
} as const;

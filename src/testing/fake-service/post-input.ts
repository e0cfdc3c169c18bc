/**
 * Validation of the body of `POST /posts` and `PATCH /posts/{id}`: each problem is a 422 naming the field
 * (wire contract). Unknown fields are kept and echoed back, as the assumptions say clients may send them.
 */
import { parseDateTime } from '../../core/date-time.js';
import type { Context } from './context.js';
import { invalid } from './http.js';
import type { FakePost } from './state.js';

/** RFC 3339 date-time with an explicit offset (ISO 8601 profile used by the wire contract). */
const READ_ONLY = ['id', 'status', 'created_at', 'published_at'];
const MAX_TEXT = 10_000;

/** The fields a create or update sets; `null` means "remove" (optional fields only, on update). */
export type PostChanges = Partial<Record<string, unknown>>;

export function validatePostInput(ctx: Context, body: Record<string, unknown>, creating: boolean): PostChanges {
  const changes: PostChanges = {};
  for (const field of READ_ONLY) if (field in body) invalid(field, 'is set by the service and cannot be sent.');
  // JSON.parse makes "__proto__" an own key; copying it onto a post would replace the post's prototype.
  if (Object.hasOwn(body, '__proto__')) invalid('__proto__', 'is not an allowed field name.');

  if (creating || 'account_ids' in body) {
    const ids = body.account_ids;
    if (!Array.isArray(ids) || ids.length === 0) invalid('account_ids', 'must be a non-empty array of account ids.');
    ids.forEach((id: unknown, i) => {
      if (typeof id !== 'string') invalid(`account_ids.${i}`, 'must be a string.');
      if (!ctx.state.accounts.has(id)) invalid(`account_ids.${i}`, `is not a connected account (${id.slice(0, 60)}).`);
      if (ids.indexOf(id) !== i) invalid(`account_ids.${i}`, 'is repeated.');
    });
    changes.account_ids = [...(ids as string[])];
  }
  if (creating || 'publish_at' in body) {
    const at = body.publish_at;
    const instant = typeof at === 'string' ? parseDateTime(at, true) : undefined;
    if (instant === undefined) invalid('publish_at', 'must be an ISO 8601 date-time with a time zone, like 2030-01-01T09:00:00Z.');
    if (instant <= ctx.clock.now()) invalid('publish_at', 'must be in the future.');
    changes.publish_at = new Date(instant).toISOString();
  }
  if ('text' in body && body.text !== null) {
    if (typeof body.text !== 'string') invalid('text', 'must be a string.');
    if (body.text.length > MAX_TEXT) invalid('text', `must be at most ${MAX_TEXT} characters.`);
  }
  if ('text' in body) changes.text = body.text;
  if ('media_ids' in body && body.media_ids !== null) {
    const ids = body.media_ids;
    if (!Array.isArray(ids)) invalid('media_ids', 'must be an array of media ids.');
    ids.forEach((id: unknown, i) => {
      if (typeof id !== 'string' || !ctx.state.media.has(id)) invalid(`media_ids.${i}`, 'is not an uploaded media id.');
    });
    changes.media_ids = [...(ids as string[])];
  } else if ('media_ids' in body) changes.media_ids = null;

  for (const [key, value] of Object.entries(body)) if (!(key in changes)) changes[key] = value;
  return changes;
}

/** Applies validated changes to a post; `null` removes an optional field. */
export function applyChanges(post: FakePost, changes: PostChanges): void {
  const target = post as Record<string, unknown>;
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete target[key];
    else target[key] = value;
  }
}

/** Post routes of the wire contract: list, create, get, update, delete, analytics. */
import { requireScope } from './bearer.js';
import type { Context } from './context.js';
import { apiError, HttpError, invalid, json, notFound, randomId, readJsonObject } from './http.js';
import { claim, idempotencyKey } from './idempotency.js';
import { analyticsFor, schedulePublication } from './lifecycle.js';
import { paginate } from './pagination.js';
import { applyChanges, validatePostInput } from './post-input.js';
import type { FakePost } from './state.js';
import type { RouteHandler } from './router.js';

const STATUSES = ['scheduled', 'published', 'failed', 'deleted'];

function findPost(ctx: Context, id: string): FakePost {
  return ctx.state.posts.get(id) ?? notFound('post', id);
}

function requireScheduled(post: FakePost, action: string): void {
  if (post.status !== 'scheduled') {
    throw new HttpError(
      apiError(409, 'post_not_scheduled', `Post ${post.id} is ${post.status}; only a scheduled post can be ${action}.`),
    );
  }
}

export const listPosts: RouteHandler = (ctx, request, _params, url) => {
  requireScope(ctx, request, 'posts:read');
  const status = url.searchParams.get('status');
  if (status !== null && !STATUSES.includes(status)) invalid('status', `must be one of ${STATUSES.join(', ')}.`);
  const page = paginate(url, [...ctx.state.posts.values()], status ?? '', (p) => status === null || p.status === status);
  return json(200, page);
};

export const createPost: RouteHandler = async (ctx, request) => {
  const token = requireScope(ctx, request, 'posts:write');
  const key = idempotencyKey(ctx, request, token.grant.clientId);
  const body = await readJsonObject(request);
  const slot = key === undefined ? undefined : await claim(ctx, key, `POST /posts\n${JSON.stringify(body)}`);
  if (slot instanceof Response) return slot;
  try {
    const changes = validatePostInput(ctx, body, true);
    const now = new Date(ctx.clock.now()).toISOString();
    const post = { id: randomId('post'), status: 'scheduled', created_at: now } as FakePost;
    applyChanges(post, changes);
    ctx.state.posts.set(post.id, post);
    ctx.stats.postsCreated++;
    schedulePublication(ctx, post);
    ctx.emit('post.scheduled', post);
    const response = json(201, post, { location: `/posts/${post.id}` });
    return slot === undefined ? response : await slot.store(response);
  } catch (error) {
    // Nothing was created: the key stays free for a corrected request (the body differs anyway).
    slot?.release();
    throw error;
  }
};

export const getPost: RouteHandler = (ctx, request, params) => {
  requireScope(ctx, request, 'posts:read');
  return json(200, findPost(ctx, params.id as string));
};

export const updatePost: RouteHandler = async (ctx, request, params) => {
  requireScope(ctx, request, 'posts:write');
  const post = findPost(ctx, params.id as string);
  const body = await readJsonObject(request);
  requireScheduled(post, 'changed');
  const changes = validatePostInput(ctx, body, false);
  const moved = typeof changes.publish_at === 'string' && changes.publish_at !== post.publish_at;
  applyChanges(post, changes);
  if (moved) schedulePublication(ctx, post);
  return json(200, post);
};

export const deletePost: RouteHandler = (ctx, request, params) => {
  requireScope(ctx, request, 'posts:write');
  const post = findPost(ctx, params.id as string);
  // DELETE is idempotent (RFC 9110 §9.2.2): deleting a deleted post answers the same, without a new event.
  if (post.status === 'deleted') return json(200, post);
  requireScheduled(post, 'deleted');
  post.status = 'deleted';
  ctx.emit('post.deleted', post);
  return json(200, post);
};

export const getAnalytics: RouteHandler = (ctx, request, params) => {
  requireScope(ctx, request, 'analytics:read');
  return json(200, analyticsFor(findPost(ctx, params.id as string)));
};

/**
 * The one route table (Assumptions table, "Endpoints for accounts, posts, media, analytics"): REST under the
 * base URL, which carries any version prefix. Paths are relative (ky's `prefixUrl`), ids path-encoded.
 * The scope each route needs is in brackets.
 */
import { invalidOption } from '../invalid-option.js';

/** One endpoint: its HTTP method and its path relative to the base URL. */
export interface Route {
  /** The HTTP method. */
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Relative to the base URL (no leading `/`), ids already path-encoded. */
  path: string;
}

/**
 * The service's endpoints, as the resources call them; the scope each needs is on each entry. Ids are checked
 * and encoded as one path segment (a `ValidationError` for an empty id, `.` or `..`).
 *
 * @example
 * routes.getPost('post_1') // { method: 'GET', path: 'posts/post_1' }
 */
export const routes = {
  /** [accounts:read] */
  listAccounts: (): Route => ({ method: 'GET', path: 'accounts' }),
  /** [accounts:read] */
  getAccount: (id: string): Route => ({ method: 'GET', path: `accounts/${pathId(id, 'id')}` }),
  /** [posts:read] */
  listPosts: (): Route => ({ method: 'GET', path: 'posts' }),
  /** [posts:write] */
  createPost: (): Route => ({ method: 'POST', path: 'posts' }),
  /** [posts:read] */
  getPost: (id: string): Route => ({ method: 'GET', path: `posts/${pathId(id, 'id')}` }),
  /** [posts:write] */
  updatePost: (id: string): Route => ({ method: 'PATCH', path: `posts/${pathId(id, 'id')}` }),
  /** [posts:write] */
  deletePost: (id: string): Route => ({ method: 'DELETE', path: `posts/${pathId(id, 'id')}` }),
  /** [media:write] multipart/form-data, one part named `file` */
  uploadMedia: (): Route => ({ method: 'POST', path: 'media' }),
  /** [analytics:read] */
  getPostAnalytics: (postId: string): Route => ({ method: 'GET', path: `posts/${pathId(postId, 'postId')}/analytics` }),
} as const;

/**
 * One path segment holding an id. `encodeURIComponent` keeps `/`, `?` and `#` inside the segment; `.` and
 * `..` are refused because URL parsing resolves them as dot-segments even when percent-encoded
 * (WHATWG URL, "single-dot / double-dot URL path segment").
 */
export function pathId(id: unknown, name: string): string {
  if (typeof id !== 'string' || id === '') {
    invalidOption(name, `must be a non-empty string, got ${id === '' ? 'an empty string' : typeof id}.`);
  }
  if (id === '.' || id === '..') {
    invalidOption(name, `cannot be "${id}": it is not an id.`);
  }
  return encodeURIComponent(id);
}

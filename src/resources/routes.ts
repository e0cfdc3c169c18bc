/**
 * The one route table (Assumptions table, "Endpoints for accounts, posts, media, analytics"): REST under the
 * base URL, which carries any version prefix. Paths are relative to it, ids path-encoded.
 * The scope each route needs is in brackets.
 */
import { invalidOption } from '../core/invalid-option.js';
import { hasDotSegment } from '../http/raw.js';

/** One endpoint: its HTTP method and its path relative to the base URL. */
export interface Route {
  /** The HTTP method. */
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Relative to the base URL (no leading `/`), ids already path-encoded. */
  path: string;
  /** The route template, ids as `{name}` (`/posts/{id}`): what tracing and hooks report, never an id. */
  route: string;
}

/**
 * The service's endpoints, as the resources call them; the scope each needs is on each entry. Ids are checked
 * and encoded as one path segment (a `ValidationError` for an empty id, `.` or `..`).
 *
 * @example
 * routes.getPost('post_1') // { method: 'GET', path: 'posts/post_1', route: '/posts/{id}' }
 */
export const routes = {
  /** [accounts:read] */
  listAccounts: (): Route => ({ method: 'GET', path: 'accounts', route: '/accounts' }),
  /** [accounts:read] */
  getAccount: (id: string): Route => ({ method: 'GET', path: `accounts/${pathId(id, 'id')}`, route: '/accounts/{id}' }),
  /** [posts:read] */
  listPosts: (): Route => ({ method: 'GET', path: 'posts', route: '/posts' }),
  /** [posts:write] */
  createPost: (): Route => ({ method: 'POST', path: 'posts', route: '/posts' }),
  /** [posts:read] */
  getPost: (id: string): Route => ({ method: 'GET', path: `posts/${pathId(id, 'id')}`, route: '/posts/{id}' }),
  /** [posts:write] */
  updatePost: (id: string): Route => ({ method: 'PATCH', path: `posts/${pathId(id, 'id')}`, route: '/posts/{id}' }),
  /** [posts:write] */
  deletePost: (id: string): Route => ({ method: 'DELETE', path: `posts/${pathId(id, 'id')}`, route: '/posts/{id}' }),
  /** [media:write] multipart/form-data, one part named `file` */
  uploadMedia: (): Route => ({ method: 'POST', path: 'media', route: '/media' }),
  /** [analytics:read] */
  getPostAnalytics: (postId: string): Route => ({ method: 'GET', path: `posts/${pathId(postId, 'postId')}/analytics`, route: '/posts/{id}/analytics' }),
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
  // Encoded they would pass (%0D%0A), and reach a server that decodes the path before it logs or routes on it.
  if (/[\u0000-\u001f\u007f]/.test(id)) invalidOption(name, 'cannot hold control characters (CR, LF, NUL, TAB…): it is not an id.');
  // Read as a raw path is: a server or proxy that decodes %2F or %5C before resolving dot segments (nginx) reads the
  // encoded id `..%2Fadmin` as `../admin`, the bytes `client.get()` refuses.
  if (hasDotSegment(id)) invalidOption(name, 'reads as a "." or ".." path segment once a server decodes it: it is not an id.');
  try {
    return encodeURIComponent(id);
  } catch {
    // URIError on a lone UTF-16 surrogate, whose message would not say which argument.
    invalidOption(name, 'holds a lone UTF-16 surrogate (half of a character): it cannot be sent in a URL.');
  }
}

/** A route with its parser and options: the `RequestSpec` of a call without a body (no object spread per call). */
export function withParse<T, O>(route: Route, parse: (body: unknown) => T, options: O): Route & { parse: (body: unknown) => T; options: O } {
  return { method: route.method, path: route.path, route: route.route, parse, options };
}

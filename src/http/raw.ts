/**
 * Calls to endpoints the SDK does not model (the spec: "Full list of operations: not shown"): `client.get(path)` and
 * its siblings build a `RequestSpec` for the same pipeline as the typed methods, so auth, refresh-on-401, retries,
 * time-outs and typed errors all apply. Only paths under the base URL are accepted: the bearer token must never
 * travel to another host.
 */
import { checkOptions, invalidOption, optionalFunction } from '../core/invalid-option.js';
import { hasDotSegment } from '../resources/routes.js';
import { checkedQuery } from './extra-fields.js';
import type { RequestOptions, RequestSpec, WriteRequestOptions } from './options.js';

/** Query parameters of a raw call; `undefined` values are left out. */
export type RawQuery = Record<string, string | number | boolean | undefined>;

/** Options of `client.get` (and every raw call): the request options, a query, and how to read the answer. */
export interface RawRequestOptions<T = unknown> extends RequestOptions {
  /** Query parameters: `{ status: 'active', limit: 10 }`. */
  query?: RawQuery;
  /**
   * Checks and types the parsed JSON answer (throw to refuse it); without it the answer is returned as parsed, as
   * `unknown` unless you name a type. An empty answer (204) is `undefined`.
   *
   * @example
   * parse: (body) => WebhookEndpointSchema.parse(body) // zod, valibot, or a hand-written check
   */
  parse?: (body: unknown) => T;
}

/** Options of `client.post`, `put`, `patch` and `delete`: also a JSON body and an idempotency key. */
export interface RawWriteOptions<T = unknown> extends RawRequestOptions<T>, WriteRequestOptions {
  /** Sent as JSON (`content-type: application/json`). */
  body?: unknown;
}

/**
 * `path` as a path relative to the base URL, without its leading `/`. Refused: absolute URLs and anything else
 * that would leave the base URL (`//host`, a backslash, `.` / `..` segments as a lenient server would read them:
 * see `hasDotSegment`), control characters, and `?` / `#` (the query goes in `query`).
 *
 * @internal
 */
export function relativePath(path: unknown): string {
  if (typeof path !== 'string' || path.replace(/^\/+/, '') === '') {
    invalidOption('path', 'must be a non-empty path relative to the base URL, such as "/webhook-endpoints".');
  }
  if (/^[a-z][a-z\d+.-]*:/i.test(path) || path.startsWith('//') || path.includes('\\')) {
    invalidOption('path', 'must be a path relative to the base URL, not a URL: calls never go to another host.');
  }
  if (/[\u0000-\u0020\u007f]/.test(path)) invalidOption('path', 'cannot hold spaces or control characters: encode them (encodeURIComponent).');
  if (path.includes('?') || path.includes('#')) invalidOption('path', 'cannot hold "?" or "#": pass query parameters as `query`.');
  if (hasDotSegment(path)) {
    invalidOption('path', 'cannot hold "." or ".." segments (encoded or not): they would leave the base URL\'s path.');
  }
  return path.replace(/^\//, '');
}

/** The pipeline's description of a raw call. @internal */
export function rawSpec<T>(method: RequestSpec<T>['method'], path: unknown, options: RawWriteOptions<T> = {}): RequestSpec<T> {
  const relative = relativePath(path);
  const { query, parse, ...rest } = checkOptions(options);
  const { body, ...writeOptions } = rest;
  // A GET has no body: a `body` there stays among the options, which refuse it by name.
  const requestOptions = method === 'GET' ? rest : writeOptions;
  if (query !== undefined) checkedQuery(query, 'query');
  optionalFunction(parse, 'parse');
  return {
    method,
    path: relative,
    // The path as given is the only template there is: ids in it are not recognised.
    route: `/${relative}`,
    ...(query === undefined ? {} : { query }),
    ...(body === undefined || method === 'GET' ? {} : { json: body }),
    parse: parse ?? identity,
    options: requestOptions,
  } as RequestSpec<T>;
}

function identity<T>(body: unknown): T {
  return body as T;
}

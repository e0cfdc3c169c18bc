/**
 * Calls to endpoints the SDK does not model (the spec: "Full list of operations: not shown"): `client.get(path)` and
 * its siblings build a `RequestSpec` for the same pipeline as the typed methods, so auth, refresh-on-401, retries,
 * time-outs and typed errors all apply. Only paths under the base URL are accepted: the bearer token must never
 * travel to another host.
 */
import { checkOptions, invalidOption, optionalFunction } from '../core/invalid-option.js';
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

/**
 * Whether `path` (a raw path, or an id before it is encoded) holds a `.` or `..` segment as some server may read it:
 * percent-escapes undone twice (a proxy may decode once more), with IIS's `%u002e`
 * and overlong UTF-8 (`%c0%ae`, `%e0%80%ae`: "." to a lenient decoder); compatibility characters folded (NFKC:
 * fullwidth `．` U+FF0E and `․` U+2024 are "."); a backslash a separator; a `;parameter` cut off (Tomcat reads
 * `..;x` as `..`).
 */
export function hasDotSegment(path: string): boolean {
  // No dot, no escape to undo and nothing NFKC could fold into a dot (ASCII): none, whatever the reading (most ids).
  if (!/[.%\x80-\uffff]/.test(path)) return false;
  return decoded(decoded(path))
    .split(/[/\\]/)
    .some((segment) => /^\.\.?(?:;|$)/.test(segment));
}

/** `text` as a lenient server decodes it (see `hasDotSegment`); an escape that is not UTF-8 is left as it is. */
function decoded(text: string): string {
  return text
    .replace(/%u([\da-f]{4})/gi, (_, code: string) => String.fromCharCode(parseInt(code, 16)))
    .replace(/%e0%([89][\da-f])%([89ab][\da-f])|%c([01])%([89ab][\da-f])/gi, (_, b2, b3, c1, c2) =>
      String.fromCharCode(b2 ? ((parseInt(b2, 16) & 0x3f) << 6) | (parseInt(b3, 16) & 0x3f) : ((parseInt(c1, 16) & 1) << 6) | (parseInt(c2, 16) & 0x3f)),
    )
    .replace(/(?:%[\da-f]{2})+/gi, (escapes) => {
      try {
        return decodeURIComponent(escapes);
      } catch {
        return escapes;
      }
    })
    .normalize('NFKC');
}

/**
 * Cursor pagination (Assumptions table, "Pagination"): `?limit=&cursor=` in, `{ data: [...], next_cursor }` out.
 * Pages are fetched lazily, one when the loop needs it. Only `data` is needed (wire-contract.ts, `pageSchema`):
 * a missing or `null` cursor ends the list, and a bare JSON array is read as one last page.
 */
import { ResponseValidationError } from '../core/errors.js';
import { refusal } from '../core/invalid-option.js';
import type { RequestOptions } from '../http/options.js';
import * as z from 'zod/mini';
import { answerParser, inputObject, wholeNumber, type InputShape } from './validate.js';
import { pageSchema } from './wire-contract.js';

/** One page of a list, as the service sent it (unknown fields kept). */
export interface Page<T> {
  /** The items of this page, in the service's order. */
  data: T[];
  /**
   * Pass as `cursor` to get the next page; `null` on the last page, also when the service sent none. A number is
   * read as its decimal string; any other value ends the list and stays on the raw body of the answer.
   */
  next_cursor: string | null;
  [field: string]: unknown;
}

/** Options of every list call. */
export interface ListParams {
  /** Stop after this many items in total; no page beyond them is fetched. */
  limit?: number;
  /** Items per request, 1..100 (the service's default is 20). */
  pageSize?: number;
}

/** The service's largest page. */
const MAX_PAGE_SIZE = 100;

/** The known fields of `ListParams`, for the list methods' input checks. */
const listFields = () => ({
  limit: z.optional(wholeNumber(Number.MAX_SAFE_INTEGER)),
  pageSize: z.optional(wholeNumber(MAX_PAGE_SIZE)),
});

/** The raw page as parsed: `data` checked, everything else as sent. */
type RawPage<T> = { data: T[]; next_cursor?: unknown; [field: string]: unknown };

/** A parser of one page whose items `item` parses (any JSON value by default); a bare JSON array is one last page. */
export function pageParser<T>(what: string, item: z.ZodMiniType<T, unknown> = z.unknown() as z.ZodMiniType<T, unknown>): (body: unknown) => RawPage<T> {
  const parse = answerParser<RawPage<T>>(what, pageSchema(item));
  return (body) => parse(Array.isArray(body) ? { data: body } : body);
}

/** The cursor of the next page, or `null` for the last one. */
function nextCursor(value: unknown): string | null {
  if (typeof value === 'string') return value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : null;
}

type FetchPage<T> = (query: { cursor?: string; limit?: number }, options: RequestOptions | undefined) => Promise<RawPage<T>>;

/**
 * A list walked lazily: `for await` yields items across pages, `pages()` yields whole pages. Nothing is
 * fetched until iteration starts, and breaking out of the loop fetches nothing more.
 *
 * @example
 * for await (const post of client.posts.list({ status: 'scheduled' })) console.log(post.id)
 * for await (const page of client.posts.list({ pageSize: 100 }).pages()) console.log(page.data.length)
 * const first10 = await client.posts.list({ limit: 10 }).toArray()
 */
export class Paginator<T> implements AsyncIterable<T> {
  readonly #fetchPage: FetchPage<T>;
  readonly #params: ListParams;
  readonly #options: RequestOptions | undefined;

  /** Not for you to build (`new Paginator()` does not compile): the `list` methods and `client.paginate` return one. */
  private constructor(fetchPage: FetchPage<T>, params: ListParams, options: RequestOptions | undefined) {
    this.#fetchPage = fetchPage;
    this.#params = params;
    this.#options = options;
  }

  /** Built by the resources' `list` methods, which check `params` first. @internal */
  static create<T>(fetchPage: FetchPage<T>, params: ListParams, options: RequestOptions | undefined): Paginator<T> {
    return new Paginator(fetchPage, params, options);
  }

  /** Whole pages, in order; with `limit`, the last page is cut to it. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    const { limit, pageSize } = this.#params;
    let remaining = limit ?? Number.POSITIVE_INFINITY;
    let cursor: string | undefined;
    // Brent's cycle detection: a cursor compared with one saved at doubling intervals catches a cycle of any
    // length (A, B, A, B …) within about twice its length, in constant memory however long the list.
    let saved: string | undefined;
    let power = 1;
    let steps = 0;
    do {
      const size = limit === undefined ? pageSize : Math.min(pageSize ?? MAX_PAGE_SIZE, remaining);
      const page = await this.#fetchPage(
        { ...(cursor === undefined ? {} : { cursor }), ...(size === undefined ? {} : { limit: size }) },
        this.#options,
      );
      const data = page.data.length > remaining ? page.data.slice(0, remaining) : page.data;
      remaining -= data.length;
      const next = nextCursor(page.next_cursor);
      yield { ...page, data, next_cursor: next };
      if (next !== null) {
        if (next === saved) {
          throw new ResponseValidationError(
            'The service repeated an earlier `next_cursor` (its pages cycle): the listing stops here. The page is on `error.body`.',
            ['next_cursor'],
            page,
          );
        }
        if (++steps === power) {
          saved = next;
          power *= 2;
          steps = 0;
        }
      }
      cursor = next ?? undefined;
    } while (cursor !== undefined && remaining > 0);
  }

  /** Iterates over every item, fetching the next page when the loop reaches the end of one. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item (up to `limit`) in one array. Prefer `for await` for long lists. */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }

  /**
   * Throws: a list is fetched lazily, so `JSON.stringify` (and `res.json`) of it would send `{}` without a word.
   * Serialize its items instead: `await client.posts.list().toArray()`.
   */
  toJSON(): never {
    throw refusal('A list (e.g. `client.posts.list()`) is fetched lazily, page by page, and cannot be serialized as it is: `await ….toArray()` first (e.g. `res.json(await client.posts.list().toArray())`), or walk it with `for await`.');
  }
}

/** The list options of `client.paginate`, checked as those of the SDK's own lists. */
export const paginateShape = /* @__PURE__ */ listShape('client.paginate');

/** The input shape of a list call whose extra known fields are `fields`. */
export function listShape(call: string, fields: z.core.$ZodLooseShape = {}): InputShape {
  return { call, schema: inputObject({ ...listFields(), ...fields }), escapeHatch: 'extraQuery' };
}

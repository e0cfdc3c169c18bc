/**
 * Cursor pagination (Assumptions table, "Pagination"): `?limit=&cursor=` in,
 * `{ data: [...], next_cursor: string | null }` out. Pages are fetched lazily, one when the loop needs it.
 */
import * as z from 'zod/mini';
import { ResponseValidationError } from '../errors.js';
import type { RequestOptions } from '../http/request.js';
import { checkInput } from './validate.js';

/** One page of a list, as the service sent it (unknown fields kept). */
export interface Page<T> {
  /** The items of this page, in the service's order. */
  data: T[];
  /** Pass as `cursor` to get the next page; `null` on the last page. */
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

/** The page envelope around an item schema. `next_cursor` may be absent: treated as the last page. */
export function pageSchema(item: z.ZodMiniType): z.ZodMiniType {
  return z.looseObject({ data: z.array(item), next_cursor: z.nullish(z.string()) });
}

// z.custom with Number.isSafeInteger (what z.int() checks) rather than z.int().check(z.minimum(), …): the same
// answers without zod's number-format machinery in every bundle.
const wholeNumber = (max: number, error: string) =>
  z.optional(z.custom<number>((value) => Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= max, { error }));

// Module-level schemas are built in `/* @__PURE__ */` IIFEs: the build puts the SDK in one chunk, and this lets a
// user's bundler drop them when this resource is not imported (see inspectAs in oauth/inspect.ts).
const ListParamsSchema = /* @__PURE__ */ (() => z.looseObject({
  limit: wholeNumber(Infinity, 'must be a positive integer (the total number of items wanted)'),
  pageSize: wholeNumber(MAX_PAGE_SIZE, `must be an integer from 1 to ${MAX_PAGE_SIZE}`),
}))();

/** Checks list params before anything is sent. */
export function checkListParams(params: ListParams): void {
  checkInput(ListParamsSchema, params);
}

type FetchPage<T> = (query: { cursor?: string; limit?: number }, options: RequestOptions | undefined) => Promise<Page<T>>;

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

  /** Built by the resources' `list` methods. @internal */
  constructor(fetchPage: FetchPage<T>, params: ListParams, options: RequestOptions | undefined) {
    checkListParams(params);
    this.#fetchPage = fetchPage;
    this.#params = params;
    this.#options = options;
  }

  /** Whole pages, in order; with `limit`, the last page is cut to it. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    const { limit, pageSize } = this.#params;
    let remaining = limit ?? Number.POSITIVE_INFINITY;
    let cursor: string | undefined;
    do {
      const size = limit === undefined ? pageSize : Math.min(pageSize ?? MAX_PAGE_SIZE, remaining);
      const page = await this.#fetchPage(
        { ...(cursor === undefined ? {} : { cursor }), ...(size === undefined ? {} : { limit: size }) },
        this.#options,
      );
      const data = page.data.length > remaining ? page.data.slice(0, remaining) : page.data;
      remaining -= data.length;
      const next = page.next_cursor ?? null;
      yield { ...page, data, next_cursor: next };
      if (next !== null && next === cursor) {
        // The same cursor again would loop forever.
        throw new ResponseValidationError('The service returned the same `next_cursor` twice; stopping the listing.', ['next_cursor'], page);
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
}

/**
 * Cursor pagination (assumptions.md "Pagination"): `?limit=` (1-100, default 20) and `?cursor=` in,
 * `{ data, next_cursor }` out. A cursor names the last item returned, so items created meanwhile do not
 * shift pages; it also records the filter it was made for, and refuses to serve another one.
 */
import { fromBase64 } from '../../core/bytes.js';
import { base64url, invalid } from './http.js';

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

function encodeCursor(after: string, filter: string): string {
  return base64url(new TextEncoder().encode(JSON.stringify({ after, filter })));
}

function decodeCursor(cursor: string): { after: string; filter: string } | undefined {
  try {
    const bytes = fromBase64(cursor);
    if (bytes === undefined) return undefined;
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (typeof value !== 'object' || value === null) return undefined;
    const { after, filter } = value as Record<string, unknown>;
    return typeof after === 'string' && typeof filter === 'string' ? { after, filter } : undefined;
  } catch {
    return undefined;
  }
}

/** One page of `items` (in their stored order) keeping those matching `matches`; `filter` names the filter. */
export function paginate<T extends { id: string }>(
  url: URL,
  items: readonly T[],
  filter = '',
  matches: (item: T) => boolean = () => true,
): Page<T> {
  const limitParam = url.searchParams.get('limit');
  let limit = 20;
  if (limitParam !== null) {
    if (!/^\d{1,3}$/.test(limitParam) || +limitParam < 1 || +limitParam > 100) {
      invalid('limit', 'must be an integer from 1 to 100.');
    }
    limit = +limitParam;
  }
  let start = 0;
  const cursorParam = url.searchParams.get('cursor');
  if (cursorParam !== null) {
    const cursor = decodeCursor(cursorParam);
    const at = cursor === undefined ? -1 : items.findIndex((item) => item.id === cursor.after);
    if (cursor === undefined || at === -1) invalid('cursor', 'is not a cursor this service returned.');
    if (cursor.filter !== filter) invalid('cursor', 'was made for other filters; keep the filters of the first page.');
    start = at + 1;
  }
  const data: T[] = [];
  let i = start;
  for (; i < items.length && data.length < limit; i++) {
    const item = items[i] as T;
    if (matches(item)) data.push(item);
  }
  const more = items.slice(i).some(matches);
  const last = data.at(-1);
  return { data, next_cursor: more && last !== undefined ? encodeCursor(last.id, filter) : null };
}

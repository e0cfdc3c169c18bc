import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostSched, ResponseValidationError, ValidationError } from '@postsched/sdk';
import { BASE, wirePost } from '../helpers.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

/** Three pages of posts: post_1..2 (cursor c2), post_3..4 (cursor c3), post_5..6 (end). Honours ?limit= per page. */
function threePages() {
  const queries: Array<Record<string, string>> = [];
  const pages: Record<string, { ids: string[]; next: string | null }> = {
    start: { ids: ['post_1', 'post_2'], next: 'c2' },
    c2: { ids: ['post_3', 'post_4'], next: 'c3' },
    c3: { ids: ['post_5', 'post_6'], next: null },
  };
  server.use(
    http.get(`${BASE}/posts`, ({ request }) => {
      const query = Object.fromEntries(new URL(request.url).searchParams);
      queries.push(query);
      const page = pages[query['cursor'] ?? 'start']!;
      const limit = query['limit'] === undefined ? page.ids.length : Number(query['limit']);
      return HttpResponse.json({ data: page.ids.slice(0, limit).map((id) => wirePost({ id })), next_cursor: page.next, total_estimate: 6 });
    }),
  );
  return queries;
}

const client = () => new PostSched({ baseUrl: BASE, auth: 'tok' });

describe('pagination', () => {
  it('walks every item across three pages, lazily, following next_cursor', async () => {
    const queries = threePages();
    const list = client().posts.list();
    expect(queries).toHaveLength(0); // nothing is fetched before iteration
    const ids: string[] = [];
    for await (const post of list) ids.push(post.id);
    expect(ids).toEqual(['post_1', 'post_2', 'post_3', 'post_4', 'post_5', 'post_6']);
    expect(queries).toEqual([{}, { cursor: 'c2' }, { cursor: 'c3' }]);
  });

  it('refuses to be serialized (res.json(list) would send `{}`), saying to await toArray() first; fetches nothing', async () => {
    const queries = threePages();
    const list = client().posts.list();
    expect(() => JSON.stringify({ posts: list })).toThrow(ValidationError);
    expect(() => JSON.stringify(list)).toThrow(/`await ….toArray\(\)` first/);
    expect(queries).toHaveLength(0);
    expect(JSON.stringify(await list.toArray())).toContain('post_6');
  });

  it('fetches no further page when the loop breaks early', async () => {
    const queries = threePages();
    const ids: string[] = [];
    for await (const post of client().posts.list()) {
      ids.push(post.id);
      if (ids.length === 3) break;
    }
    expect(ids).toEqual(['post_1', 'post_2', 'post_3']);
    expect(queries).toHaveLength(2);
  });

  it('stops at `limit` items in total, asking only for what is left', async () => {
    const queries = threePages();
    const posts = await client().posts.list({ limit: 3, pageSize: 2 }).toArray();
    expect(posts.map((p) => p.id)).toEqual(['post_1', 'post_2', 'post_3']);
    expect(queries).toEqual([{ limit: '2' }, { cursor: 'c2', limit: '1' }]);
  });

  it('cuts a page that holds more than the limit, and fetches nothing more', async () => {
    const seen: string[] = [];
    server.use(
      http.get(`${BASE}/posts`, ({ request }) => {
        seen.push(request.url);
        return HttpResponse.json({ data: [1, 2, 3, 4].map((i) => wirePost({ id: `post_${i}` })), next_cursor: 'more' });
      }),
    );
    const posts = await client().posts.list({ limit: 2 }).toArray();
    expect(posts).toHaveLength(2);
    expect(seen).toHaveLength(1);
  });

  it('yields whole pages with .pages(), unknown envelope fields kept', async () => {
    threePages();
    const pages = [];
    for await (const page of client().posts.list().pages()) pages.push(page);
    expect(pages.map((p) => p.data.length)).toEqual([2, 2, 2]);
    expect(pages.map((p) => p.next_cursor)).toEqual(['c2', 'c3', null]);
    expect(pages[0]!['total_estimate']).toBe(6);
  });

  it('stops instead of looping forever when the service repeats a cursor', async () => {
    server.use(http.get(`${BASE}/posts`, () => HttpResponse.json({ data: [wirePost()], next_cursor: 'same' })));
    const error = await client().posts.list().toArray().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).path).toEqual(['next_cursor']);
  });

  it('names the broken item of a page that breaks the schema', async () => {
    server.use(http.get(`${BASE}/posts`, () => HttpResponse.json({ data: [wirePost(), wirePost({ id: 7 })], next_cursor: null })));
    const error = (await client().posts.list().toArray().catch((e: unknown) => e)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.path).toEqual(['data', 1, 'id']);
  });

  it.each([{ limit: 0 }, { limit: 1.5 }, { pageSize: 0 }, { pageSize: 101 }])('rejects %j before any request', (params) => {
    expect(() => client().posts.list(params)).toThrow(ValidationError);
  });

  it.each([{ limit: '5' }, { limit: 2 ** 53 }, { limit: Number.NaN }, { pageSize: 2.5 }, { pageSize: '10' }])(
    'rejects %j (not a safe whole number) naming the field',
    (params) => {
      const field = Object.keys(params)[0]!;
      expect(() => client().posts.list(params as never)).toThrow(expect.objectContaining({ path: [field], message: expect.stringContaining(field) }));
    },
  );

  it('accepts limit 1 and pageSize 100, the edges', () => {
    expect(() => client().posts.list({ limit: 1, pageSize: 100 })).not.toThrow();
  });
});

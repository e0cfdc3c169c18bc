/**
 * Issue 15: endpoints the SDK does not model, through the same pipeline (`client.get/post/put/patch/delete`,
 * `client.paginate`), and `client.withOptions`.
 */
import { describe, expect, it } from 'vitest';
import { APIPromise, AuthenticationError, InternalServerError, NotFoundError, PostSched, ResponseValidationError, ValidationError } from '@postsched/sdk';
import { FakeTokenProvider } from '../helpers.js';

const BASE = 'https://api.postsched.test/v1';

function recording(answer: (request: Request, n: number) => Response | Promise<Response> = () => Response.json({ ok: true })) {
  const seen: Array<{ method: string; url: string; headers: Headers; body: string }> = [];
  const tokens = new FakeTokenProvider('tok_1', 'tok_2');
  const client = new PostSched({
    baseUrl: BASE,
    auth: tokens,
    fetch: async (request) => {
      seen.push({ method: request.method, url: request.url, headers: new Headers(request.headers), body: await request.text() });
      return answer(request, seen.length);
    },
  });
  return { client, seen, tokens };
}

describe('client.get/post/put/patch/delete', () => {
  it('sends a GET to {base_url}/path with or without a leading slash, with the bearer token and the query', async () => {
    const { client, seen } = recording(() => Response.json({ data: [1] }));
    const answer = client.get<{ data: number[] }>('/webhook-endpoints', { query: { limit: 10, active: true, skipped: undefined } });
    expect(answer).toBeInstanceOf(APIPromise);
    expect(await answer).toEqual({ data: [1] });
    await client.get('webhook-endpoints/we_1');
    expect(seen.map((r) => r.url)).toEqual([`${BASE}/webhook-endpoints?limit=10&active=true`, `${BASE}/webhook-endpoints/we_1`]);
    expect(seen[0]!.headers.get('authorization')).toBe('Bearer tok_1');
  });

  it('sends JSON bodies with post/put/patch/delete, and the idempotency key', async () => {
    const { client, seen } = recording(() => Response.json({ id: 'we_1' }));
    await client.post('/webhook-endpoints', { body: { url: 'https://app.example/hooks' }, idempotencyKey: 'k1' });
    await client.put('/webhook-endpoints/we_1', { body: { url: 'https://app.example/hooks2' } });
    await client.patch('/webhook-endpoints/we_1', { body: { enabled: false } });
    await client.delete('/webhook-endpoints/we_1');
    expect(seen.map((r) => r.method)).toEqual(['POST', 'PUT', 'PATCH', 'DELETE']);
    expect(seen[0]!.headers.get('idempotency-key')).toBe('k1');
    expect(seen[0]!.headers.get('content-type')).toContain('application/json');
    expect(JSON.parse(seen[0]!.body)).toEqual({ url: 'https://app.example/hooks' });
    expect(JSON.parse(seen[2]!.body)).toEqual({ enabled: false });
  });

  it('refreshes once on a 401 and retries, like the typed methods', async () => {
    const { client, seen, tokens } = recording((request) =>
      request.headers.get('authorization') === 'Bearer tok_1' ? Response.json({}, { status: 401 }) : Response.json({ ok: 1 }),
    );
    expect(await client.get('/things')).toEqual({ ok: 1 });
    expect(tokens.refreshCalls).toEqual(['tok_1']);
    expect(seen.map((r) => r.headers.get('authorization'))).toEqual(['Bearer tok_1', 'Bearer tok_2']);
  });

  it('retries a PUT and a DELETE on 503 (idempotent), never a POST or PATCH without a key', async () => {
    for (const [method, expected] of [['put', 3], ['delete', 3], ['post', 1], ['patch', 1]] as const) {
      const { client, seen } = recording(() => Response.json({}, { status: 503, headers: { 'retry-after': '0' } }));
      await expect(client[method]('/things/1', { body: {} })).rejects.toBeInstanceOf(InternalServerError);
      expect(seen, method).toHaveLength(expected);
    }
  });

  it('maps errors to the typed classes and non-JSON to ResponseValidationError', async () => {
    const { client } = recording((_r, n) => (n === 1 ? Response.json({ error: 'nope' }, { status: 404 }) : new Response('<html>', { status: 200 })));
    await expect(client.get('/missing')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.get('/html')).rejects.toBeInstanceOf(ResponseValidationError);
  });

  it('applies the parse function, and gives withResponse() with the raw response', async () => {
    const { client } = recording(() => Response.json({ count: '3' }, { headers: { 'x-request-id': 'req_9' } }));
    const parse = (body: unknown) => Number((body as { count: string }).count);
    expect(await client.get('/count', { parse })).toBe(3);
    const { data, response, requestId } = await client.get('/count', { parse }).withResponse();
    expect(data).toBe(3);
    expect(response.status).toBe(200);
    expect(requestId).toBe('req_9');
  });

  it('an empty 204 answer is undefined', async () => {
    const { client } = recording(() => new Response(null, { status: 204 }));
    expect(await client.delete('/webhook-endpoints/we_1')).toBeUndefined();
  });

  it.each([
    'https://evil.example/steal',
    'http://api.postsched.test/v1/x',
    '//evil.example/x',
    '\\\\evil.example\\x',
    'javascript:alert(1)',
    '/../admin',
    '/a/%2e%2e/%2E%2e/admin',
    '/a/./b',
    '/posts?status=x',
    '/posts#frag',
    '/has space',
    '',
    '/',
  ])('refuses %j before anything is sent', async (path) => {
    const { client, seen } = recording();
    const error = await client.get(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(['path']);
    expect(seen).toHaveLength(0);
  });

  it.each([
    [{ query: { since: { after: 1 } } }, ['query', 'since']],
    [{ query: { limit: Number.NaN } }, ['query', 'limit']],
    [{ query: { limit: Number.POSITIVE_INFINITY } }, ['query', 'limit']],
    [{ query: { at: new Date(0) } }, ['query', 'at']],
    [{ query: { ids: ['a', 'b'] } }, ['query', 'ids']],
    [{ query: { x: null } }, ['query', 'x']],
    [{ query: 'status=active' }, ['query']],
    [{ parse: 'json' }, ['parse']],
  ])('refuses a query or parse that would send or do what nobody meant: %j', async (options, path) => {
    const { client, seen } = recording();
    const error = await client.get('/things', options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(path);
    expect(seen).toHaveLength(0);
  });

  it('a 401 on a raw call after the refresh is an AuthenticationError', async () => {
    const { client } = recording(() => Response.json({}, { status: 401 }));
    await expect(client.get('/things')).rejects.toBeInstanceOf(AuthenticationError);
  });
});

describe('client.paginate', () => {
  it('walks { data, next_cursor } pages with ?limit=&cursor=, query kept on every page, items parsed', async () => {
    const { client, seen } = recording((request) => {
      const cursor = new URL(request.url).searchParams.get('cursor');
      return Response.json(cursor === null ? { data: [{ n: 1 }, { n: 2 }], next_cursor: 'c2' } : { data: [{ n: 3 }], next_cursor: null });
    });
    const items = await client.paginate('/webhook-endpoints', { query: { active: true }, pageSize: 2, parseItem: (item) => (item as { n: number }).n }).toArray();
    expect(items).toEqual([1, 2, 3]);
    expect(seen.map((r) => new URL(r.url).search)).toEqual(['?active=true&limit=2', '?active=true&cursor=c2&limit=2']);
  });

  it.each([
    [{ limit: -1 }, ['limit']],
    [{ limit: 'all' }, ['limit']],
    [{ pageSize: 0 }, ['pageSize']],
    [{ pageSize: 1000 }, ['pageSize']],
    [{ parseItem: true }, ['parseItem']],
    [{ query: { active: Number.NaN } }, ['query', 'active']],
  ])('refuses %j when called, before any page is fetched', (options, path) => {
    const { client, seen } = recording();
    let error: unknown;
    try {
      client.paginate('/things', options as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(path);
    expect(seen).toHaveLength(0);
  });

  it('stops at limit without fetching more pages', async () => {
    const { client, seen } = recording(() => Response.json({ data: [1, 2, 3], next_cursor: 'more' }));
    expect(await client.paginate<number>('/numbers', { limit: 2 }).toArray()).toEqual([1, 2]);
    expect(seen).toHaveLength(1);
  });
});

describe('client.withOptions', () => {
  it('derives a client with other options that shares the auth: one refresh serves both', async () => {
    const { client, seen, tokens } = recording((request) =>
      request.headers.get('authorization') === 'Bearer tok_1' ? Response.json({}, { status: 401 }) : Response.json({ id: 'p', account_ids: [] }),
    );
    const derived = client.withOptions({ headers: { 'x-tenant': 't1' }, maxRetries: 0 });
    expect(derived).toBeInstanceOf(PostSched);
    await derived.posts.get('p');
    await client.posts.get('p');
    expect(tokens.refreshCalls).toEqual(['tok_1']);
    expect(seen[0]!.headers.get('x-tenant')).toBe('t1');
    expect(seen.at(-1)!.headers.get('x-tenant')).toBeNull();
  });

  it('takes a shorter time-out and no retries for the derived client only', async () => {
    let calls = 0;
    const client = new PostSched({
      baseUrl: BASE,
      auth: 't',
      fetch: async () => {
        calls++;
        return Response.json({}, { status: 503, headers: { 'retry-after': '0' } });
      },
    });
    await expect(client.withOptions({ maxRetries: 0 }).get('/x')).rejects.toBeInstanceOf(InternalServerError);
    expect(calls).toBe(1);
    await expect(client.get('/x')).rejects.toBeInstanceOf(InternalServerError);
    expect(calls).toBe(4);
  });

  it('checks the overrides like the constructor does', () => {
    const client = new PostSched({ baseUrl: BASE, auth: 't' });
    expect(() => client.withOptions({ timeoutMs: -1 })).toThrow(ValidationError);
    // A JavaScript caller's baseUrl or auth is refused, not dropped: the copy would otherwise quietly keep ours.
    expect(() => client.withOptions({ baseUrl: 'https://elsewhere.example' } as never)).toThrow(/`baseUrl` is kept by withOptions\(\): create a new PostSched/);
    expect(() => client.withOptions({ auth: 'tok_other' } as never)).toThrow(ValidationError);
  });
});

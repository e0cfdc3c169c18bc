import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationError, PostSched, ValidationError } from '@postsched/sdk';
import { BASE, FakeTokenProvider, wirePost } from '../helpers.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

/** The service: accepts only the tokens in `valid`, records the Authorization of each request. */
function service(valid: string[]) {
  const seen: string[] = [];
  server.use(
    http.all(`${BASE}/*`, async ({ request }) => {
      const authorization = request.headers.get('authorization') ?? '';
      seen.push(authorization);
      await request.text();
      if (!valid.some((token) => authorization === `Bearer ${token}`)) {
        return HttpResponse.json(
          { error: { code: 'invalid_token', message: 'The access token expired' } },
          { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } },
        );
      }
      return HttpResponse.json(wirePost(), { status: request.method === 'POST' ? 201 : 200 });
    }),
  );
  return seen;
}

const newPost = { account_ids: ['acc_1'], publish_at: '2030-02-01T09:00:00Z' };

describe('auth', () => {
  it('refreshes once on a 401 and re-sends the request with the new token', async () => {
    const seen = service(['tok_2']);
    const tokens = new FakeTokenProvider('tok_1', 'tok_2');
    const post = await new PostSched({ baseUrl: BASE, auth: tokens }).posts.get('post_1');
    expect(post.id).toBe('post_1');
    expect(tokens.refreshCalls).toEqual(['tok_1']);
    expect(seen).toEqual(['Bearer tok_1', 'Bearer tok_2']);
  });

  it('re-sends a POST without idempotency key after a 401 (the service did not act), with the same body', async () => {
    const bodies: string[] = [];
    server.use(
      http.post(`${BASE}/posts`, async ({ request }) => {
        bodies.push(await request.text());
        return request.headers.get('authorization') === 'Bearer tok_2'
          ? HttpResponse.json(wirePost(), { status: 201 })
          : new HttpResponse(null, { status: 401 });
      }),
    );
    const tokens = new FakeTokenProvider('tok_1', 'tok_2');
    await new PostSched({ baseUrl: BASE, auth: tokens }).posts.create(newPost);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toBe(bodies[0]);
    expect(JSON.parse(bodies[0]!)).toMatchObject({ account_ids: ['acc_1'] });
  });

  it('throws AuthenticationError when the refreshed token is refused too, after one refresh only', async () => {
    const seen = service([]);
    const tokens = new FakeTokenProvider('tok_1', 'tok_2', 'tok_3');
    const error = await new PostSched({ baseUrl: BASE, auth: tokens }).posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).toBe(401);
    expect(tokens.refreshCalls).toEqual(['tok_1']);
    expect(seen).toHaveLength(2);
  });

  it('asks the provider for a token on every call, so a refreshed token is picked up', async () => {
    service(['tok_1']);
    const tokens = new FakeTokenProvider('tok_1');
    const client = new PostSched({ baseUrl: BASE, auth: tokens });
    await client.posts.get('post_1');
    await client.posts.get('post_2');
    expect(tokens.getCalls).toBe(2);
  });

  it('sends a fixed token as given, and a 401 on it is final', async () => {
    const seen = service(['fixed_ok']);
    await new PostSched({ baseUrl: BASE, auth: 'fixed_ok' }).posts.get('post_1');
    const error = await new PostSched({ baseUrl: BASE, auth: 'fixed_bad' }).posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(seen).toEqual(['Bearer fixed_ok', 'Bearer fixed_bad']);
  });

  it('calls an async token function per attempt, and once more after a 401', async () => {
    const seen = service(['fn_2']);
    let calls = 0;
    const auth = async () => `fn_${++calls}`;
    await new PostSched({ baseUrl: BASE, auth }).posts.get('post_1');
    expect(seen).toEqual(['Bearer fn_1', 'Bearer fn_2']);
  });

  it('refuses a token that cannot be a header value without echoing it', async () => {
    const error = await new PostSched({ baseUrl: BASE, auth: async () => 'secret\r\nX-Evil: 1' })
      .posts.get('post_1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).not.toContain('secret');
    expect(() => new PostSched({ baseUrl: BASE, auth: '' })).toThrow(ValidationError);
    expect(() => new PostSched({ baseUrl: BASE, auth: 42 as never })).toThrow(ValidationError);
  });

  it('reads the token again for a retry, so one refreshed during the wait is sent', async () => {
    const seen: string[] = [];
    let token = 'tok_before';
    const client = new PostSched({
      baseUrl: 'https://api.example',
      auth: { getAccessToken: async () => token, forceRefresh: async () => token, peekAccessToken: () => token } as never,
      fetch: async (request) => {
        seen.push(request.headers.get('authorization') ?? '');
        token = 'tok_after'; // the manager refreshed while the call waited to retry
        return seen.length === 1 ? Response.json({}, { status: 503, headers: { 'retry-after': '0' } }) : Response.json(wirePost());
      },
    });
    await client.posts.get('post_1');
    expect(seen).toEqual(['Bearer tok_before', 'Bearer tok_after']);
  });
});

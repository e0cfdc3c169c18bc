import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostSched, ResponseValidationError } from '@postsched/sdk';
import { BASE } from '../helpers.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const account = { id: 'acc_1', platform: 'mastodon', name: 'Main', avatar_url: 'https://x.test/a.png' };
const analytics = { post_id: 'post_1', impressions: 10, likes: 2, shares: 1, comments: 0, clicks: 3, saves: 4 };

function record(respond: (url: URL) => Response) {
  const seen: Array<{ method: string; url: URL; headers: Headers; body: string }> = [];
  server.use(
    http.all(`${BASE}/*`, async ({ request }) => {
      const url = new URL(request.url);
      seen.push({ method: request.method, url, headers: request.headers, body: await request.text() });
      return respond(url);
    }),
  );
  return seen;
}

const client = () => new PostSched({ baseUrl: BASE, auth: 'tok_acc', headers: { 'x-app': 'demo' } });

describe('accounts', () => {
  it('lists accounts with GET /accounts and keeps unknown fields', async () => {
    const seen = record(() => HttpResponse.json({ data: [account], next_cursor: null }));
    const accounts = await client().accounts.list().toArray();
    expect(accounts).toEqual([account]);
    expect(seen[0]!.method).toBe('GET');
    expect(seen[0]!.url.pathname).toBe('/v1/accounts');
    expect(seen[0]!.headers.get('authorization')).toBe('Bearer tok_acc');
    expect(seen[0]!.headers.get('x-app')).toBe('demo');
    expect(seen[0]!.body).toBe('');
  });

  it('gets one account with GET /accounts/{id}', async () => {
    const seen = record(() => HttpResponse.json(account));
    const result = await client().accounts.get('acc 1/x');
    expect(result.name).toBe('Main');
    expect(seen[0]!.url.pathname).toBe('/v1/accounts/acc%201%2Fx');
  });
});

describe('analytics', () => {
  it('reads a post\'s analytics with GET /posts/{id}/analytics, unknown counters kept', async () => {
    const seen = record(() => HttpResponse.json(analytics));
    const result = await client().analytics.getPost('post_1');
    expect(result).toEqual(analytics);
    expect(`${seen[0]!.method} ${seen[0]!.url.pathname}`).toBe('GET /v1/posts/post_1/analytics');
    expect(seen[0]!.headers.get('authorization')).toBe('Bearer tok_acc');
  });

  it('keeps a counter of another type as the service sent it (every analytics field is assumed)', async () => {
    record(() => HttpResponse.json({ ...analytics, impressions: '10', likes: null }));
    const result = await client().analytics.getPost('post_1');
    expect(result).toEqual({ ...analytics, impressions: '10', likes: null });
  });

  it('refuses an answer that is not an object, naming the expected and the received type', async () => {
    record(() => HttpResponse.json([analytics]));
    const error = (await client().analytics.getPost('post_1').catch((e: unknown) => e)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.path).toEqual([]);
    expect(error.message).toContain('expected object, received array');
  });
});

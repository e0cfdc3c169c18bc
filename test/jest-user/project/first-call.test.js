// What a jest user's test does (CJS, fake timers, msw): a call, a retry after a 503 with Retry-After, and a 401
// answered by a refresh, each made while the test drives the clock. Each must settle within the faked time.
const { http, HttpResponse } = require('msw');
const { setupServer } = require('msw/node');
const { MemoryTokenStore, OAuthClient, PostSched, TokenManager } = require('@postsched/sdk');

const BASE = 'https://api.postsched.test';
const post = { id: 'p1', account_ids: ['acc_1'], publish_at: '2030-01-01T09:00:00Z', status: 'scheduled' };

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  jest.useRealTimers();
});
afterAll(() => server.close());

/** Starts `call` under fake timers and drives the clock as a user's test does; resolves what the call settled to. */
async function underFakeTimers(call, drive) {
  jest.useFakeTimers();
  let outcome;
  call().then(
    (value) => (outcome = { value }),
    (error) => (outcome = { error }),
  );
  await drive();
  return outcome;
}

test('settles the first GET of a new client while the test advances a fake clock', async () => {
  server.use(http.get(`${BASE}/posts/p1`, () => HttpResponse.json(post)));
  const client = new PostSched({ baseUrl: BASE, auth: 'tok_1' });
  const outcome = await underFakeTimers(() => client.posts.get('p1'), () => jest.advanceTimersByTimeAsync(1000));
  expect(outcome).toEqual({ value: expect.objectContaining({ id: 'p1', account_ids: ['acc_1'] }) });
});

test('settles a call retried after a 503 with Retry-After when the test runs all timers', async () => {
  let answered = 0;
  server.use(
    http.get(`${BASE}/posts/p1`, () =>
      ++answered === 1 ? new HttpResponse(null, { status: 503, headers: { 'retry-after': '2' } }) : HttpResponse.json(post),
    ),
  );
  const client = new PostSched({ baseUrl: BASE, auth: 'tok_1' });
  const outcome = await underFakeTimers(() => client.posts.get('p1'), () => jest.runAllTimersAsync());
  expect(outcome).toEqual({ value: expect.objectContaining({ id: 'p1' }) });
  expect(answered).toBe(2);
});

test('settles a call answered 401, refreshed through the token endpoint and sent again', async () => {
  const sent = [];
  server.use(
    http.get(`${BASE}/posts/p1`, ({ request }) => {
      sent.push(request.headers.get('authorization') ?? '');
      return request.headers.get('authorization') === 'Bearer at_2' ? HttpResponse.json(post) : new HttpResponse(null, { status: 401 });
    }),
    http.post(`${BASE}/oauth/token`, () =>
      HttpResponse.json({ access_token: 'at_2', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_2' }),
    ),
  );
  const oauth = new OAuthClient({ baseUrl: BASE, clientId: 'app', clientSecret: 'secret', redirectUri: 'http://127.0.0.1:3000/callback' });
  const store = new MemoryTokenStore({ accessToken: 'at_1', refreshToken: 'rt_1', expiresAt: Date.now() + 3_600_000, scopes: ['posts:read'], tokenType: 'bearer' });
  const client = new PostSched({ baseUrl: BASE, auth: new TokenManager({ oauth, store }) });
  const outcome = await underFakeTimers(() => client.posts.get('p1'), () => jest.advanceTimersByTimeAsync(1000));
  expect(outcome).toEqual({ value: expect.objectContaining({ id: 'p1' }) });
  expect(sent).toEqual(['Bearer at_1', 'Bearer at_2']);
  expect((await store.get()).refreshToken).toBe('rt_2');
});

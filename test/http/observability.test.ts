/**
 * Issue 15, watching the SDK in production: the User-Agent and `appInfo`, rate-limit state, the
 * `postsched:request` TracingChannel and the onRequest / onResponse / onRetry hooks.
 */
import diagnostics_channel from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CALL_CHANNEL, MemoryTokenStore, OAuthClient, PostSched, RateLimitError, REQUEST_CHANNEL, SDK_VERSION, TokenManager, ValidationError, type CallTrace, type RequestTrace } from '@postsched/sdk';

const BASE = 'https://api.postsched.test/v1';
const TOKEN = 'tok_secret_observe_1';
const POST = { id: 'post_1', account_ids: ['acc_1'] };
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

function client(answer: (request: Request, n: number) => Response = () => Response.json(POST), options: Record<string, unknown> = {}) {
  const seen: Request[] = [];
  const sdk = new PostSched({
    baseUrl: BASE,
    auth: TOKEN,
    fetch: async (request) => {
      seen.push(request);
      return answer(request, seen.length);
    },
    ...options,
  });
  return { sdk, seen };
}

describe('User-Agent and appInfo', () => {
  it('sends postsched-sdk/<version> node/<version>', async () => {
    const { sdk, seen } = client();
    await sdk.posts.get('post_1');
    expect(SDK_VERSION).toBe(version);
    expect(seen[0]!.headers.get('user-agent')).toBe(`postsched-sdk/${version} node/${process.versions.node}`);
  });

  it('appends the app named by appInfo, and a User-Agent given in headers wins', async () => {
    const { sdk, seen } = client(undefined, { appInfo: { name: 'MyApp', version: '1.2.3', url: 'https://myapp.example' } });
    await sdk.posts.get('post_1');
    expect(seen[0]!.headers.get('user-agent')).toBe(`postsched-sdk/${version} node/${process.versions.node} MyApp/1.2.3 (+https://myapp.example)`);
    const own = client(undefined, { headers: { 'user-agent': 'mine/1' } });
    await own.sdk.posts.get('post_1');
    expect(own.seen[0]!.headers.get('user-agent')).toBe('mine/1');
  });

  it.each([{ name: 'My App' }, { name: '' }, { name: 'A', version: '1 2' }, { name: 'A', url: 'javascript:x' }, { name: 'A\r\nX: y' }])(
    'refuses appInfo %j with a ValidationError',
    (appInfo) => {
      expect(() => new PostSched({ baseUrl: BASE, auth: 't', appInfo: appInfo as never })).toThrow(ValidationError);
    },
  );
});

describe('User-Agent by runtime', () => {
  it('sends none in a browser page or a browser worker (no document there), and the SDK alone elsewhere', async () => {
    const { userAgent } = await import('../../src/core/user-agent.js');
    const { vi } = await import('vitest');
    const browser = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
    const seen: Array<string | undefined> = [];
    for (const globals of [
      { navigator: { userAgent: browser }, document: {} }, // a page
      { navigator: { userAgent: browser }, document: undefined }, // a web or service worker
      { navigator: undefined, document: undefined }, // an unknown runtime
    ]) {
      vi.stubGlobal('process', undefined);
      for (const [name, value] of Object.entries(globals)) vi.stubGlobal(name, value);
      try {
        seen.push(userAgent(undefined));
      } finally {
        vi.unstubAllGlobals();
      }
    }
    expect(seen).toEqual([undefined, undefined, `postsched-sdk/${version}`]);
  });
});

describe('rate-limit state', () => {
  it.each([
    [{ 'ratelimit-limit': '100', 'ratelimit-remaining': '42', 'ratelimit-reset': '30' }, { limit: 100, remaining: 42, resetMs: 30_000 }],
    [{ ratelimit: '"default";r=7;t=12', 'ratelimit-policy': '"default";q=50;w=60' }, { limit: 50, remaining: 7, resetMs: 12_000 }],
    // Two policies: the first one's values, not the second's.
    [{ ratelimit: '"minute";r=3;t=20, "day";r=900;t=80000', 'ratelimit-policy': '"minute";q=10;w=60, "day";q=1000;w=86400' }, { limit: 10, remaining: 3, resetMs: 20_000 }],
    // The one-dictionary form of the drafts up to 06.
    [{ ratelimit: 'limit=100, remaining=50, reset=30' }, { limit: 100, remaining: 50, resetMs: 30_000 }],
    [{ 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4999' }, { limit: 5000, remaining: 4999, resetMs: undefined }],
    [{ 'x-ratelimit-limit': 'lots', 'x-ratelimit-remaining': '-1', 'ratelimit-reset': '1e400' }, undefined],
  ])('withResponse().rateLimit reads %j', async (headers, expected) => {
    const { sdk } = client(() => Response.json(POST, { headers }));
    const { rateLimit } = await sdk.posts.get('post_1').withResponse();
    expect(rateLimit).toEqual(expected);
  });

  it('an epoch-seconds X-RateLimit-Reset (GitHub) becomes the time left', async () => {
    const reset = Math.floor(Date.now() / 1000) + 60;
    const { sdk } = client(() => Response.json(POST, { headers: { 'x-ratelimit-reset': String(reset) } }));
    const { rateLimit } = await sdk.posts.get('post_1').withResponse();
    expect(rateLimit!.resetMs).toBeGreaterThan(55_000);
    expect(rateLimit!.resetMs).toBeLessThanOrEqual(60_000);
  });

  it('RateLimitError carries the rate-limit state', async () => {
    const { sdk } = client(() =>
      Response.json({}, { status: 429, headers: { 'retry-after': '3600', 'ratelimit-limit': '10', 'ratelimit-remaining': '0' } }),
    );
    const error = (await sdk.posts.get('post_1').catch((e: unknown) => e)) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.rateLimit).toEqual({ limit: 10, remaining: 0, resetMs: undefined });
  });
});

describe('tracing on the postsched:request TracingChannel', () => {
  const channel = diagnostics_channel.tracingChannel(REQUEST_CHANNEL);
  const events: Array<{ event: string; context: RequestTrace }> = [];
  const handlers = {
    start: (context: unknown) => events.push({ event: 'start', context: { ...(context as RequestTrace) } }),
    end: () => undefined,
    asyncStart: () => undefined,
    asyncEnd: (context: unknown) => events.push({ event: 'asyncEnd', context: { ...(context as RequestTrace) } }),
    error: (context: unknown) => events.push({ event: 'error', context: { ...(context as RequestTrace) } }),
  };
  afterEach(() => {
    channel.unsubscribe(handlers);
    events.length = 0;
  });

  it('publishes each attempt with the method, the route template, the attempt, the status and the duration', async () => {
    channel.subscribe(handlers);
    const { sdk } = client((_r, n) => (n === 1 ? Response.json({}, { status: 503, headers: { 'retry-after': '0' } }) : Response.json(POST)));
    await sdk.posts.get('post_1');
    expect(events.map((e) => [e.event, e.context.method, e.context.route, e.context.attempt, e.context.status])).toEqual([
      ['start', 'GET', '/posts/{id}', 1, undefined],
      ['asyncEnd', 'GET', '/posts/{id}', 1, 503],
      ['start', 'GET', '/posts/{id}', 2, undefined],
      ['asyncEnd', 'GET', '/posts/{id}', 2, 200],
    ]);
    expect(events[1]!.context.origin).toBe('https://api.postsched.test');
    expect(events[1]!.context.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('never publishes a header, a token or a body', async () => {
    channel.subscribe(handlers);
    const { sdk } = client(() => Response.json({ ...POST, echo: TOKEN }));
    await sdk.posts.create({ account_ids: ['acc_1'], publish_at: new Date(Date.now() + 86_400_000), text: 'secret text' });
    for (const { context } of events) {
      expect(Object.keys(context).sort()).toEqual(expect.arrayContaining(['attempt', 'method', 'origin', 'route']));
      expect(Object.keys(context).every((key) => ['attempt', 'method', 'origin', 'route', 'url', 'status', 'durationMs', 'error', 'result'].includes(key))).toBe(true);
      expect(context).not.toHaveProperty('result', expect.anything()); // the traced function returns nothing
      expect(JSON.stringify(context)).not.toMatch(/tok_secret|secret text|authorization/i);
    }
  });

  it('publishes each call on postsched:call around its attempts, the token request its 401 needed inside it, with its grant type', async () => {
    const calls = diagnostics_channel.tracingChannel(CALL_CHANNEL);
    const order: string[] = [];
    const callHandlers = {
      start: (c: unknown) => order.push(`call ${(c as CallTrace).method} ${(c as CallTrace).route}`),
      asyncEnd: () => order.push('call end'),
      end() {},
      asyncStart() {},
      error() {},
    };
    const requestHandlers = {
      start: (c: unknown) => order.push(`request ${(c as RequestTrace).method} ${(c as RequestTrace).route} ${(c as RequestTrace).grantType ?? (c as RequestTrace).attempt}`),
      end() {},
      asyncStart() {},
      asyncEnd() {},
      error() {},
    };
    const fetch = async (input: string | Request, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init);
      if (request.url.endsWith('/oauth/token')) return Response.json({ access_token: 'tok_secret_fresh', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_secret_2' });
      return request.headers.get('authorization') === 'Bearer tok_secret_fresh' ? Response.json(POST) : new Response(null, { status: 401 });
    };
    const oauth = new OAuthClient({ baseUrl: BASE, clientId: 'client_1', clientSecret: 'cs_secret', redirectUri: 'https://app.example/cb', fetch });
    const store = new MemoryTokenStore({ accessToken: 'tok_secret_old', refreshToken: 'rt_secret_1', expiresAt: Date.now() + 3_600_000, scopes: [], tokenType: 'bearer' });
    const sdk = new PostSched({ baseUrl: BASE, auth: new TokenManager({ oauth, store }), fetch });
    calls.subscribe(callHandlers);
    channel.subscribe(requestHandlers);
    try {
      await sdk.posts.get('post_1');
    } finally {
      calls.unsubscribe(callHandlers);
      channel.unsubscribe(requestHandlers);
    }
    expect(order).toEqual(['call GET /posts/{id}', 'request GET /posts/{id} 1', 'request POST /v1/oauth/token refresh_token', 'request GET /posts/{id} 2', 'call end']);
    expect(JSON.stringify(order)).not.toMatch(/secret/);
  });

  it('sends the trace headers a subscriber sets on start with that attempt, never one that replaces the token', async () => {
    let n = 0;
    const setHeaders = { ...handlers, start: (context: unknown) => void ((context as RequestTrace).traceHeaders = { traceparent: `tp-${++n}`, Authorization: 'Bearer other' }) };
    channel.subscribe(setHeaders);
    try {
      const { sdk, seen } = client((_r, k) => (k === 1 ? Response.json({}, { status: 503, headers: { 'retry-after': '0' } }) : Response.json(POST)));
      await sdk.posts.get('post_1');
      expect(seen.map((r) => [r.headers.get('authorization'), r.headers.get('traceparent')])).toEqual([
        [`Bearer ${TOKEN}`, 'tp-1'],
        [`Bearer ${TOKEN}`, 'tp-2'],
      ]);
    } finally {
      channel.unsubscribe(setHeaders);
    }
  });

  it('publishes a failed attempt on error with the SDK error', async () => {
    channel.subscribe(handlers);
    const { sdk } = client(() => {
      throw new TypeError('fetch failed');
    }, { maxRetries: 0 });
    await expect(sdk.posts.get('post_1')).rejects.toMatchObject({ name: 'ConnectionError' });
    expect(events.map((e) => e.event)).toEqual(['start', 'error', 'asyncEnd']);
    expect((events[1]!.context.error as Error).name).toBe('ConnectionError');
  });
  it("publishes a timed-out attempt on error with the SDK's TimeoutError (never ky's, which holds the Request)", async () => {
    channel.subscribe(handlers);
    const hang = (request: Request) => new Promise<Response>((_resolve, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason)));
    const sdk = new PostSched({ baseUrl: BASE, auth: TOKEN, timeoutMs: 20, maxRetries: 0, fetch: hang });
    await expect(sdk.posts.get('post_1')).rejects.toMatchObject({ name: 'TimeoutError', timeoutMs: 20 });
    expect(events.map((e) => e.event)).toEqual(['start', 'error', 'asyncEnd']);
    expect(events[1]!.context.error).toMatchObject({ name: 'TimeoutError', timeoutMs: 20 });
    expect(events[1]!.context.error).not.toHaveProperty('request');
  });
});

describe('onRequest, onResponse and onRetry hooks', () => {
  it('see read-only views of each attempt, without the Authorization header', async () => {
    const calls: Array<[string, Record<string, unknown>]> = [];
    const { sdk } = client((_r, n) => (n === 1 ? Response.json({}, { status: 503, headers: { 'retry-after': '0' } }) : Response.json(POST, { headers: { 'x-request-id': 'req_7' } })), {
      onRequest: (info: Record<string, unknown>) => calls.push(['request', info]),
      onResponse: (info: Record<string, unknown>) => calls.push(['response', info]),
      onRetry: (info: Record<string, unknown>) => calls.push(['retry', info]),
    });
    await sdk.posts.get('post_1');
    expect(calls.map(([kind, info]) => [kind, info['attempt'], info['status']])).toEqual([
      ['request', 1, undefined],
      ['response', 1, 503],
      ['retry', 2, 503],
      ['request', 2, undefined],
      ['response', 2, 200],
    ]);
    expect(calls[2]![1]).toMatchObject({ method: 'GET', route: '/posts/{id}', reason: 'status', delayMs: 0 });
    expect(calls[4]![1]).toMatchObject({ url: `${BASE}/posts/post_1`, route: '/posts/{id}', requestId: 'req_7' });
    expect(JSON.stringify(calls)).not.toContain(TOKEN);
    expect(Object.isFrozen(calls[0]![1])).toBe(true);
    expect((calls[0]![1]['headers'] as Record<string, string>)['accept']).toBe('application/json');
  });

  it('onRetry sees the re-send after a 401 (attempt 2, no wait, status 401), once the token was refreshed', async () => {
    const calls: Array<[string, Record<string, unknown>]> = [];
    const refreshed: string[] = [];
    const sdk = new PostSched({
      baseUrl: BASE,
      auth: { getAccessToken: async () => 'tok_expired_1', forceRefresh: async (refused: string) => (refreshed.push(refused), 'tok_fresh_2') },
      fetch: async (request) => (request.headers.get('authorization') === 'Bearer tok_fresh_2' ? Response.json(POST) : Response.json({}, { status: 401 })),
      onRequest: (info) => calls.push(['request', { ...info }]),
      onResponse: (info) => calls.push(['response', { ...info }]),
      onRetry: (info) => calls.push(['retry', { ...info }]),
    });
    await sdk.posts.get('post_1');
    expect(refreshed).toEqual(['tok_expired_1']);
    expect(calls.map(([kind, info]) => [kind, info['attempt'], info['status']])).toEqual([
      ['request', 1, undefined],
      ['response', 1, 401],
      ['retry', 2, 401],
      ['request', 2, undefined],
      ['response', 2, 200],
    ]);
    expect(calls[2]![1]).toEqual({ method: 'GET', route: '/posts/{id}', attempt: 2, delayMs: 0, reason: 'status', status: 401 });
    expect(JSON.stringify(calls)).not.toMatch(/tok_expired_1|tok_fresh_2/);
  });

  it('onRetry is not called for a 401 that no newer token answers: the AuthenticationError is thrown', async () => {
    const retries: unknown[] = [];
    const { sdk } = client(() => Response.json({}, { status: 401 }), { onRetry: (info: unknown) => retries.push(info) });
    await expect(sdk.posts.get('post_1')).rejects.toMatchObject({ name: 'AuthenticationError', status: 401 });
    expect(retries).toEqual([]);
  });

  it('never show a credential: cookies, proxy credentials and a token the server echoes in a header are left out', async () => {
    const views: Array<Record<string, unknown>> = [];
    const { sdk } = client(
      () => Response.json(POST, { headers: { 'set-cookie': 'session=s3cr3t_cookie', 'x-echo': `Bearer ${TOKEN}`, 'x-request-id': 'req_1' } }),
      {
        headers: { cookie: 'sid=c00kie_value', 'proxy-authorization': 'Basic cHJveHlfc2VjcmV0', 'x-app': 'kept' },
        onRequest: (info: Record<string, unknown>) => views.push(info),
        onResponse: (info: Record<string, unknown>) => views.push(info),
      },
    );
    await sdk.posts.get('post_1');
    const [request, response] = views.map((view) => view['headers'] as Record<string, string>);
    expect(Object.keys(request!)).not.toEqual(expect.arrayContaining(['cookie']));
    expect(request).not.toHaveProperty('proxy-authorization');
    expect(request).toMatchObject({ 'x-app': 'kept' });
    expect(response).not.toHaveProperty('set-cookie');
    expect(response!['x-echo']).toBe('Bearer [redacted]');
    expect(JSON.stringify(views)).not.toMatch(new RegExp(`${TOKEN}|s3cr3t_cookie|c00kie_value|cHJveHlfc2VjcmV0`));
  });

  it('a hook that throws or rejects never breaks the call', async () => {
    const { sdk } = client(undefined, {
      onRequest: () => {
        throw new Error('broken hook');
      },
      onResponse: async () => {
        throw new Error('broken async hook');
      },
    });
    expect(await sdk.posts.get('post_1')).toMatchObject({ id: 'post_1' });
  });

  it('refuses a hook that is not a function', () => {
    expect(() => new PostSched({ baseUrl: BASE, auth: 't', onRequest: 'log' as never })).toThrow(ValidationError);
  });
});

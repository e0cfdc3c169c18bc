/**
 * @postsched/sdk/otel: PostSchedInstrumentation as an app registers it, against a server on 127.0.0.1, with and
 * without @opentelemetry/instrumentation-undici: span counts, parentage, the traceparent the server got, attributes
 * and metrics.
 */
import { propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryTokenStore, OAuthClient, PostSched, TokenManager } from '@postsched/sdk';
import { PostSchedInstrumentation } from '@postsched/sdk/otel';
import { parentIdOf, scriptedServer, setUpTelemetry, type Script, type Telemetry } from './otel-setup.js';

const POST = { id: 'post_1', account_ids: ['acc_1'], status: 'scheduled', publish_at: '2030-01-01T00:00:00Z' };
const SECRETS = ['at_otel_secret_1', 'at_otel_secret_2', 'rt_otel_secret_1', 'rt_otel_secret_2', 'cs_otel_secret'];

let telemetry: Telemetry;
let stop: (() => void) | undefined;
let server: Awaited<ReturnType<typeof scriptedServer>> | undefined;
beforeEach(() => {
  telemetry = setUpTelemetry();
});
afterEach(async () => {
  stop?.();
  await server?.close();
  [stop, server] = [undefined, undefined];
  await telemetry.close();
});

/** The instrumentation, and undici's too when `withUndici`, registered as an app does. */
function register(withUndici: boolean): void {
  const instrumentations = withUndici ? [new PostSchedInstrumentation(), new UndiciInstrumentation()] : [new PostSchedInstrumentation()];
  stop = registerInstrumentations({ instrumentations });
}

/** A client whose access token `at_otel_secret_1` the server refuses once (401): one refresh, through the server. */
function oauthClient(url: string, fetch?: typeof globalThis.fetch): PostSched {
  const oauth = new OAuthClient({ baseUrl: url, clientId: 'client_1', clientSecret: 'cs_otel_secret', redirectUri: 'https://app.example/callback' });
  const store = new MemoryTokenStore({ accessToken: 'at_otel_secret_1', refreshToken: 'rt_otel_secret_1', expiresAt: Date.now() + 3_600_000, scopes: ['posts:read'], tokenType: 'bearer' });
  return new PostSched({ baseUrl: url, auth: new TokenManager({ oauth, store }), ...(fetch === undefined ? {} : { fetch }) });
}

/** GET /posts/post_1: a 401 for the first token, then 503 once, a reset once, a 429 once, then the post. */
const eventful: Script = (request, _body, n) => {
  if (request.url === '/oauth/token') return { status: 200, json: { access_token: 'at_otel_secret_2', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_otel_secret_2', scope: 'posts:read' } };
  if (request.headers.authorization === 'Bearer at_otel_secret_1') return { status: 401, json: { error: { code: 'invalid_token', message: 'expired' } } };
  if (n === 3) return { status: 503, headers: { 'retry-after': '0' } };
  if (n === 4) return { status: 429, headers: { 'retry-after': '1' } }; // the call waits on it, then goes again
  return { status: 200, json: POST };
};

/** `posts.get` against a server that resets the first request's connection (a GET: sent again). */
async function getAfterReset(withUndici: boolean): Promise<NonNullable<typeof server>> {
  register(withUndici);
  const started = await scriptedServer((request, _body, n) => {
    if (n === 1) request.socket.destroy();
    return { status: 200, json: POST };
  });
  server = started;
  await new PostSched({ baseUrl: started.url, auth: 'at_otel_secret_1' }).posts.get('post_1');
  return started;
}

/** The spans of one trace by name, with their parent. */
function tree(spans: ReadableSpan[]) {
  return spans.map((span) => ({ name: span.name, kind: span.kind, id: span.spanContext().spanId, parent: span.parentSpanContext?.spanId, scope: span.instrumentationScope.name }));
}

function expectNoSecrets(spans: ReadableSpan[], metricsJson: string): void {
  const text = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status }))) + metricsJson;
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

describe('PostSchedInstrumentation without undici instrumentation', () => {
  it('one span per call under the app span, one CLIENT span per wire request under it, each traceparent naming its CLIENT span', async () => {
    register(false);
    server = await scriptedServer(eventful);
    // A custom fetch is traced too: the SDK sends the traceparent itself.
    const client = oauthClient(server.url, (input, init) => fetch(input, init));
    const app = trace.getTracer('app');
    await app.startActiveSpan('app', async (span) => {
      await client.posts.get('post_1');
      span.end();
    });

    const spans = telemetry.spans();
    const nodes = tree(spans);
    const appSpan = nodes.find((n) => n.name === 'app')!;
    const call = nodes.find((n) => n.name === 'GET /posts/{id}' && n.kind === SpanKind.INTERNAL)!;
    expect(call.parent).toBe(appSpan.id);
    const clients = nodes.filter((n) => n.kind === SpanKind.CLIENT);
    // 401, the token request, the re-send (503), its retry (429), the last one (200).
    expect(clients.map((n) => n.name)).toEqual(['GET /posts/{id}', 'POST /oauth/token', 'GET /posts/{id}', 'GET /posts/{id}', 'GET /posts/{id}']);
    expect(clients.every((n) => n.parent === call.id)).toBe(true);
    expect(nodes).toHaveLength(7);

    // Every request the server got carries exactly one traceparent, whose parent is that request's CLIENT span.
    expect(server.received.map((r) => r.path)).toEqual(['/posts/post_1', '/oauth/token', '/posts/post_1', '/posts/post_1', '/posts/post_1']);
    expect(server.received.map((r) => r.traceparents.length)).toEqual([1, 1, 1, 1, 1]);
    expect(server.received.map((r) => parentIdOf(r.traceparents[0]!))).toEqual(clients.map((n) => n.id));
    expect(new Set(server.received.map((r) => r.traceparents[0]!.split('-')[1]))).toEqual(new Set([spans[0]!.spanContext().traceId]));

    const attempts = spans.filter((s) => s.kind === SpanKind.CLIENT);
    const port = Number(new URL(server.url).port);
    expect(attempts[0]!.attributes).toEqual({
      'http.request.method': 'GET',
      'url.template': '/posts/{id}',
      'url.full': `${server.url}/posts/post_1`,
      'server.address': '127.0.0.1',
      'server.port': port,
      'http.response.status_code': 401,
      'error.type': '401',
    });
    expect(attempts[0]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(attempts.map((s) => [s.attributes['http.response.status_code'], s.attributes['http.request.resend_count']])).toEqual([
      [401, undefined],
      [200, undefined],
      [503, 1],
      [429, 2],
      [200, 3],
    ]);
    expect(attempts[1]!.attributes['url.full']).toBe(`${server.url}/oauth/token`);

    const durations = await telemetry.histogram('http.client.request.duration');
    expect(durations.reduce((sum, point) => sum + point.value.count, 0)).toBe(5);
    expect(durations.find((p) => p.attributes['http.response.status_code'] === 503)?.attributes).toMatchObject({ 'http.request.method': 'GET', 'url.template': '/posts/{id}', 'error.type': '503' });
    const refreshes = await telemetry.histogram('postsched.token.refresh.duration');
    expect(refreshes.map((p) => p.value.count)).toEqual([1]);
    expectNoSecrets(spans, JSON.stringify([durations, refreshes]));
  });

  it('a reset attempt is an error span with error.type; the retry after it carries its own traceparent', async () => {
    const { received } = await getAfterReset(false);
    const attempts = telemetry.spans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(attempts.map((s) => [s.attributes['error.type'], s.attributes['http.response.status_code'], s.status.code])).toEqual([
      ['ConnectionError', undefined, SpanStatusCode.ERROR],
      [undefined, 200, SpanStatusCode.UNSET],
    ]);
    expect(attempts[0]!.events.map((e) => e.name)).toEqual(['exception']);
    // The reset request reached the server too, with the first attempt's traceparent.
    expect(received.map((r) => parentIdOf(r.traceparents[0]!))).toEqual(attempts.map((s) => s.spanContext().spanId));
  });

  it('a call the rate limiter holds records its wait (postsched.rate_limiter.wait.duration) on the call span', async () => {
    register(false);
    server = await scriptedServer((_request, _body, n) => ({ status: 200, json: POST, headers: n === 1 ? { 'ratelimit-limit': '1', 'ratelimit-remaining': '0', 'ratelimit-reset': '1' } : {} }));
    const client = new PostSched({ baseUrl: server.url, auth: 'at_otel_secret_1' });
    await client.posts.get('post_1');
    await client.posts.get('post_1');
    const calls = telemetry.spans().filter((s) => s.kind === SpanKind.INTERNAL);
    expect(calls.map((s) => s.events.map((e) => e.name))).toEqual([[], ['postsched.rate_limiter.wait']]);
    const waits = await telemetry.histogram('postsched.rate_limiter.wait.duration');
    expect(waits.map((p) => [p.value.count, p.attributes['url.template']])).toEqual([[1, '/posts/{id}']]);
  });

  it('a tracer that throws (a broken propagator) costs the span, never the call or the app', async () => {
    register(false);
    propagation.disable(); // the W3C one, set by setUpTelemetry
    propagation.setGlobalPropagator({ inject: () => { throw new Error('broken propagator'); }, extract: (context) => context, fields: () => [] });
    server = await scriptedServer(() => ({ status: 200, json: POST }));
    const post = await new PostSched({ baseUrl: server.url, auth: 'at_otel_secret_1' }).posts.get('post_1');
    expect(post.id).toBe('post_1');
    expect(server.received[0]!.traceparents).toEqual([]);
  });

  it('costs nothing when disabled: no span, no header', async () => {
    const instrumentation = new PostSchedInstrumentation();
    instrumentation.disable();
    stop = () => undefined;
    server = await scriptedServer(() => ({ status: 200, json: POST }));
    await new PostSched({ baseUrl: server.url, auth: 'at_otel_secret_1' }).posts.get('post_1');
    expect(telemetry.spans()).toEqual([]);
    expect(server.received[0]!.traceparents).toEqual([]);
  });
});

describe('PostSchedInstrumentation with @opentelemetry/instrumentation-undici', () => {
  it("makes no CLIENT span of its own: undici's is each attempt's, under the call's span, and its traceparent the only one", async () => {
    register(true);
    server = await scriptedServer(eventful);
    const client = oauthClient(server.url);
    await client.posts.get('post_1');

    const spans = telemetry.spans();
    const nodes = tree(spans);
    const call = nodes.find((n) => n.kind === SpanKind.INTERNAL)!;
    expect(call.name).toBe('GET /posts/{id}');
    const clients = nodes.filter((n) => n.kind === SpanKind.CLIENT);
    expect(clients).toHaveLength(5);
    expect(clients.every((n) => n.scope === '@opentelemetry/instrumentation-undici' && n.parent === call.id)).toBe(true);
    expect(nodes).toHaveLength(6);
    expect(server.received.map((r) => r.traceparents.length)).toEqual([1, 1, 1, 1, 1]);
    expect(server.received.map((r) => parentIdOf(r.traceparents[0]!))).toEqual(clients.map((n) => n.id));

    // Measured once per attempt: by undici, not a second time by the SDK.
    const durations = await telemetry.histogram('http.client.request.duration');
    expect(durations.reduce((sum, point) => sum + point.value.count, 0)).toBe(5);
    expect((await telemetry.histogram('postsched.token.refresh.duration')).map((p) => p.value.count)).toEqual([1]);
    expectNoSecrets(spans, JSON.stringify(durations));
  });

  it("a reset attempt and its retry: undici's two CLIENT spans under the call's, one traceparent each", async () => {
    const { received } = await getAfterReset(true);
    const nodes = tree(telemetry.spans());
    const call = nodes.find((n) => n.kind === SpanKind.INTERNAL)!;
    const clients = nodes.filter((n) => n.kind === SpanKind.CLIENT);
    expect(clients.map((n) => [n.scope, n.parent])).toEqual([
      ['@opentelemetry/instrumentation-undici', call.id],
      ['@opentelemetry/instrumentation-undici', call.id],
    ]);
    expect(received.map((r) => r.traceparents.length)).toEqual([1, 1]);
    expect(received.map((r) => parentIdOf(r.traceparents[0]!))).toEqual(clients.map((n) => n.id));
  });
});

describe('url.full', () => {
  it('never shows a URL credential or the value of an OAuth or signature query parameter', async () => {
    const { fullUrl } = await import('../../src/otel/attributes.js');
    expect(fullUrl('https://user:pw_secret@api.example/v1/posts?code=c_secret&access_token=at_secret&cursor=abc&X-Amz-Signature=sig_secret')).toBe(
      'https://REDACTED:REDACTED@api.example/v1/posts?code=REDACTED&access_token=REDACTED&cursor=abc&X-Amz-Signature=REDACTED',
    );
  });
});

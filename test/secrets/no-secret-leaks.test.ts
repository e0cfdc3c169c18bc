/**
 * No secret ever shows: one sweep over every error, log line and rendering of the SDK's objects produced
 * along realistic failure paths (the OAuth flow against the fake on loopback, token endpoint errors,
 * 401/403/404/429/5xx, time-outs, refused connections, bad input, failing token stores, webhook failures),
 * searched for every client secret, code, verifier, access and refresh token and webhook secret used.
 * The tokens and codes the fake issues are recorded off the wire, so the search knows their exact values.
 * PostSchedInstrumentation is registered throughout: every span name, attribute, event and metric is searched too.
 */
import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  MemoryTokenStore,
  OAuthClient,
  PostSched,
  TokenManager,
  type FetchLike,
  type TokenSet,
  type TokenStore,
} from '@postsched/sdk';
import { signWebhook, verifyWebhook } from '@postsched/sdk/webhooks';
import { createFakeService, type FakeService, type ListeningFakeService } from '@postsched/sdk/testing';
import { PostSchedInstrumentation } from '@postsched/sdk/otel';
import { setUpTelemetry, type Telemetry } from '../otel/otel-setup.js';

const CLIENT_SECRET = 'cs_LEAKCHECK_client_9f2e7a';
const WRONG_CLIENT_SECRET = 'cs_LEAKCHECK_wrong_41b0c3';
const WEBHOOK_SECRET = 'whsec_LEAKCHECK_5d1c8e77';
const FIXED_TOKEN = 'at_LEAKCHECK_fixed_77aa19';
const APP = { clientId: 'leak_app', clientSecret: CLIENT_SECRET, redirectUris: ['http://127.0.0.1/callback'] };

/** Every secret value the test used or saw on the wire. */
const secrets = new Set<string>([CLIENT_SECRET, WRONG_CLIENT_SECRET, WEBHOOK_SECRET, FIXED_TOKEN]);
/** Everything a user could print: errors, the SDK's objects, log lines, console output. */
const rendered: Array<{ what: string; text: string }> = [];
const errorNames: string[] = [];
const logLines: string[] = [];
const logger = { debug: (...args: unknown[]) => logLines.push(args.map((a) => (typeof a === 'string' ? a : inspect(a))).join(' ')) };

let fake: FakeService;
let server: ListeningFakeService;
let telemetry: Telemetry;
let instrumentation: PostSchedInstrumentation;

/** A fetch for the OAuthClient that records the secrets crossing the wire: form fields out, tokens back. */
const recordingFetch: FetchLike = async (input, init) => {
  const form = new URLSearchParams(typeof init.body === 'string' ? init.body : init.body instanceof URLSearchParams ? init.body : '');
  for (const field of ['code', 'code_verifier', 'refresh_token', 'client_secret']) {
    const value = form.get(field);
    if (value !== null) secrets.add(value);
  }
  const response = await fetch(input, init);
  const body = (await response.clone().json().catch(() => ({}))) as Record<string, unknown>;
  for (const field of ['access_token', 'refresh_token']) if (typeof body[field] === 'string') secrets.add(body[field]);
  return response;
};

function render(value: unknown, seen = new Set<unknown>()): string {
  if (seen.has(value)) return '';
  seen.add(value);
  const parts = [inspect(value, { depth: Infinity, showHidden: true, getters: true }), safeJson(value), String(value)];
  if (value instanceof Error) {
    parts.push(value.message, value.stack ?? '');
    // The cause chain, and the errors of an AggregateError, however deep.
    if (value.cause !== undefined) parts.push(render(value.cause, seen));
    if (value instanceof AggregateError) for (const inner of value.errors) parts.push(render(inner, seen));
  }
  return parts.join('\n');
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch (error) {
    return `(JSON.stringify threw ${(error as Error).message})`;
  }
}

/** Runs a call expected to fail; keeps the error's renderings and its class name. */
async function failure(what: string, run: () => unknown): Promise<Error> {
  try {
    await run();
  } catch (error) {
    errorNames.push(`${what}: ${(error as Error).name}`);
    rendered.push({ what, text: render(error) });
    return error as Error;
  }
  throw new Error(`${what}: expected a failure, got a value`);
}

function show(what: string, value: unknown): void {
  rendered.push({ what, text: render(value) });
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function oauthClient(overrides: Partial<ConstructorParameters<typeof OAuthClient>[0]> = {}): OAuthClient {
  return new OAuthClient({
    baseUrl: server.url,
    clientId: APP.clientId,
    clientSecret: CLIENT_SECRET,
    redirectUri: APP.redirectUris[0]!,
    fetch: recordingFetch,
    ...overrides,
  });
}

/** The browser step against the fake: the consent screen redirects to the callback with a code. */
async function authorize(oauth: OAuthClient) {
  const pending = await oauth.createAuthorizationUrl({ scopes: ['accounts:read', 'posts:read', 'posts:write'] });
  secrets.add(pending.codeVerifier);
  const location = (await fetch(pending.url, { redirect: 'manual' })).headers.get('location') ?? '';
  const code = new URL(location).searchParams.get('code');
  if (code !== null) secrets.add(code);
  return { pending, callback: location };
}

const consoleLines: string[] = [];

beforeAll(async () => {
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void consoleLines.push(args.map((a) => inspect(a, { depth: Infinity })).join(' ')));
  }
  fake = createFakeService({ apps: [APP] });
  server = await fake.listen();
  telemetry = setUpTelemetry();
  instrumentation = new PostSchedInstrumentation();
});

afterAll(async () => {
  instrumentation?.disable();
  await telemetry?.close();
  vi.restoreAllMocks();
  await fake?.close();
});

describe('no secret in any error, log line or rendering', () => {
  it('OAuth flow and token endpoint failures', async () => {
    const oauth = oauthClient();
    const { pending, callback } = await authorize(oauth);
    await failure('callback with a wrong state', () => oauth.exchangeCode(callback, { ...pending, state: 'not-the-state' }));
    const tokens = await oauth.exchangeCode(callback, pending);
    const rotated = await oauth.refresh(tokens);
    await failure('refresh token used twice', () => oauth.refresh(tokens));
    const again = await authorize(oauth);
    await oauth.exchangeCode(again.callback, again.pending);
    // A second use of a code revokes what it issued (RFC 6749 §4.1.2), so this comes after the refreshes above.
    await failure('code used twice', () => oauth.exchangeCode(again.callback, again.pending));
    const wrong = oauthClient({ clientSecret: WRONG_CLIENT_SECRET });
    const second = await authorize(wrong);
    await failure('wrong client secret', () => wrong.exchangeCode(second.callback, second.pending));
    fake.setConsent('deny');
    const denied = await authorize(oauth);
    await failure('consent denied', () => oauth.exchangeCode(denied.callback, denied.pending));
    fake.setConsent('approve');
    fake.faults.error({ path: '/oauth/token', status: 500 });
    await failure('token endpoint 500', () => oauth.refresh(rotated));
    fake.faults.hang({ path: '/oauth/token' });
    await failure('token endpoint time-out', () => oauthClient({ timeoutMs: 200 }).refresh(rotated));
    const refused = `http://127.0.0.1:${await closedPort()}`;
    await failure('token endpoint refused', () => oauthClient({ baseUrl: refused }).refresh(rotated));
    await failure('bad OAuthClient options', () => new OAuthClient({ baseUrl: 'http://example.com', clientId: 'x', clientSecret: CLIENT_SECRET, redirectUri: 'https://a.example/cb' }));
    show('OAuthClient', oauth);
    show('AuthorizationRequest-free tokens holder', new MemoryTokenStore(rotated));
  });

  it('API calls through a TokenManager: refresh, 401, 403, 404, 429, 5xx, time-out, reset, refused, bad input', async () => {
    const oauth = oauthClient();
    const { pending, callback } = await authorize(oauth);
    const store = new MemoryTokenStore(await oauth.exchangeCode(callback, pending));
    const manager = new TokenManager({ oauth, store });
    const client = new PostSched({ baseUrl: server.url, auth: manager, logger, maxRetries: 1, timeoutMs: 500 });
    const post = await client.posts.create({ account_ids: ['acc_demo_x'], publish_at: '2040-01-01T00:00:00Z', text: 'hi' });
    await fake.clock.advance(3_601_000); // the access token expires: 401, one refresh, retry
    await client.posts.get(post.id);
    await failure('404', () => client.posts.get('post_missing'));
    await failure('bad input', () => client.posts.create({ account_ids: [], publish_at: 'tomorrow' }));
    fake.faults.rateLimit({ path: '/posts/{id}', retryAfter: 3600 });
    await failure('429', () => client.posts.get(post.id));
    fake.faults.error({ path: '/posts/{id}', status: 500, times: 2 });
    await failure('500', () => client.posts.get(post.id));
    fake.faults.hang({ path: '/accounts', times: 2 });
    await failure('time-out', () => client.accounts.list().toArray());
    fake.faults.reset({ path: '/accounts', times: 2 });
    await failure('reset', () => client.accounts.list().toArray());
    const limited = fake.issueTokens({ clientId: APP.clientId, scopes: ['posts:read'] });
    secrets.add(limited.access_token).add(limited.refresh_token);
    await failure('403', () => new PostSched({ baseUrl: server.url, auth: limited.access_token, logger }).posts.create({ account_ids: ['acc_demo_x'], publish_at: '2040-01-01T00:00:00Z' }));
    await failure('401 with a fixed token', () => new PostSched({ baseUrl: server.url, auth: FIXED_TOKEN, logger }).posts.get(post.id));
    const refused = `http://127.0.0.1:${await closedPort()}`;
    await failure('refused', () => new PostSched({ baseUrl: refused, auth: manager, logger }).posts.get(post.id));
    await failure('token with a space', () => new PostSched({ baseUrl: server.url, auth: `${FIXED_TOKEN} x`, logger }).posts.get(post.id));
    await failure('token with a line break', () => new PostSched({ baseUrl: server.url, auth: () => `${FIXED_TOKEN}\n`, logger }).posts.get(post.id));
    await failure('plain http', () => new PostSched({ baseUrl: 'http://api.example.com', auth: FIXED_TOKEN }));
    await failure('setTokens with a bad TokenSet', () => manager.setTokens({ accessToken: FIXED_TOKEN, refreshToken: 42 } as unknown as TokenSet));
    // The grant is revoked by reusing a refresh token: the manager must ask for a new authorization.
    const current = (await manager.getTokens())!;
    await oauth.refresh(current);
    await fake.clock.advance(3_601_000);
    await failure('refresh refused under a call', () => client.posts.get(post.id));
    show('PostSched', client);
    show('TokenManager', manager);
    show('MemoryTokenStore', store);
    show('tokens inside an object', { client, manager, store, oauth });
  });

  it('token stores that fail with the tokens in their own error messages', async () => {
    const oauth = oauthClient();
    /** Tokens of a new authorization, so each store below refreshes its own. */
    const newTokens = async () => {
      const { pending, callback } = await authorize(oauth);
      return oauth.exchangeCode(callback, pending);
    };
    const tokens = await newTokens();
    const echo = (verb: string, value: unknown) => new Error(`${verb} failed for ${JSON.stringify(value)}`);
    const failingGet: TokenStore = { get: async () => Promise.reject(echo('GET', tokens)), set: async () => undefined };
    await failure('store get()', () => new TokenManager({ oauth, store: failingGet }).getAccessToken());
    const expired = { ...(await newTokens()), expiresAt: Date.now() - 1 };
    const failingSet: TokenStore = { get: async () => expired, set: async (t) => Promise.reject(echo('SET', t)) };
    await failure('store set() after a refresh', () => new TokenManager({ oauth, store: failingSet }).getAccessToken());
    const stale = { ...(await newTokens()), expiresAt: Date.now() - 1 };
    const onTokens = (t: TokenSet) => Promise.reject(echo('onTokens', t));
    await failure('onTokens', () => new TokenManager({ oauth, store: new MemoryTokenStore(stale), onTokens }).getAccessToken());
    // Its own tokens: `stale` was refreshed just above, and the process now takes its successor without a lock.
    const unlocked = { ...(await newTokens()), expiresAt: Date.now() - 1 };
    const failingLock: TokenStore = { get: async () => unlocked, set: async () => undefined, lock: async () => Promise.reject(echo('LOCK', unlocked)) };
    await failure('store lock()', () => new TokenManager({ oauth, store: failingLock }).getAccessToken());
    show('a failing store inside a TokenManager', new TokenManager({ oauth, store: failingGet }));
  });

  it('webhook failures with a known secret', async () => {
    const body = JSON.stringify({
      event: 'post.published',
      created_at: '2030-01-01T00:00:00Z',
      data: { id: 'post_1', account_ids: ['acc_1'], published_at: '2030-01-01T00:00:00Z' },
    });
    const signature = await signWebhook({ body, secret: WEBHOOK_SECRET });
    await verifyWebhook({ body, signature, secret: WEBHOOK_SECRET });
    await failure('wrong secret', () => verifyWebhook({ body, signature, secret: 'whsec_other' }));
    await failure('tampered body', () => verifyWebhook({ body: body.replace('post_1', 'post_2'), signature, secret: WEBHOOK_SECRET }));
    await failure('old timestamp', () => verifyWebhook({ body, signature, secret: WEBHOOK_SECRET, now: Date.now() + 3_600_000 }));
    await failure('no signature', () => verifyWebhook({ body, signature: new Headers(), secret: WEBHOOK_SECRET }));
    await failure('the secret passed as the signature', () => verifyWebhook({ body, signature: WEBHOOK_SECRET, secret: WEBHOOK_SECRET }));
    await failure('secret with a trailing newline', () => verifyWebhook({ body, signature, secret: `${WEBHOOK_SECRET}\n` }));
    await failure('signature with the secret in it', () => verifyWebhook({ body, signature: `t=1,v1=${WEBHOOK_SECRET}`, secret: WEBHOOK_SECRET }));
  });

  it('none of it shows any secret used', async () => {
    expect(errorNames.length).toBeGreaterThanOrEqual(30);
    // The spans and metrics of every call and token request above: names, attributes, events, status.
    const spans = telemetry.spans();
    expect(spans.filter((span) => span.name.endsWith('/oauth/token')).length).toBeGreaterThan(10);
    for (const span of spans) rendered.push({ what: `span ${span.name}`, text: render({ name: span.name, attributes: span.attributes, events: span.events, status: span.status }) });
    for (const name of ['http.client.request.duration', 'postsched.token.refresh.duration', 'postsched.rate_limiter.wait.duration']) {
      rendered.push({ what: `metric ${name}`, text: render(await telemetry.histogram(name)) });
    }
    expect(logLines.length).toBeGreaterThan(10);
    for (const line of logLines) rendered.push({ what: 'log line', text: line });
    for (const line of consoleLines) rendered.push({ what: 'console', text: line });
    // The recorder saw the wire: codes, verifiers, client secrets, access and refresh tokens.
    expect(secrets.size).toBeGreaterThan(15);
    const leaks = rendered.flatMap(({ what, text }) => [...secrets].filter((secret) => text.includes(secret)).map((secret) => `${what} shows ${secret}`));
    expect(leaks).toEqual([]);
    // And nothing shaped like a credential slipped through under another name.
    for (const { what, text } of rendered) expect(text, what).not.toMatch(/bearer\s+(?!\[redacted\])[\w.~+/-]{8,}/i);
  });
});

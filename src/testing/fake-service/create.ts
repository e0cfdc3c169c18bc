/**
 * `createFakeService`: the whole fake, wired together. One Web-standard handler (`Request` in, `Response`
 * out) serves three ways: called directly, through msw (`mswHandlers`), or on 127.0.0.1 (`listen`).
 */
import { toTokenSet } from '../../oauth/normalize.js';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/event.js';
import type { TokenSet } from '../../oauth/types.js';
import { type FakeClock, Scheduler } from './clock.js';
import type { Context, FakeStats } from './context.js';
import { ConnectionResetFault, type FakeFaults, FaultInjector } from './faults.js';
import { apiError, HttpError, randomId } from './http.js';
import type { ListeningFakeService } from './listen.js';
import { answerConsent, authorize } from './oauth-authorize.js';
import { mintTokens, revokeToken, token } from './oauth-token.js';
import { createGrant, resolveRefreshPolicy } from './refresh-policy.js';
import { DEMO_ACCOUNTS, type AccountInput, type AppInput, type FakeServiceOptions, type WebhookEndpointInput } from './options.js';
import { matchRoute, type Route } from './router.js';
import { getAccount, listAccounts } from './routes-accounts.js';
import { uploadMedia } from './routes-media.js';
import { createPost, deletePost, getAnalytics, getPost, listPosts, updatePost } from './routes-posts.js';
import {
  type ConsentMode, type FakeAccount, type FakePost, type RegisteredApp, State, type StoredMedia,
  type WebhookEndpoint,
} from './state.js';
import { type WebhookDelivery, WebhookDispatcher } from './webhooks-delivery.js';
import { type AnswerShape, answerShaper, WIRE_PROFILES } from './wire-profile.js';
import { checkOptions, optionNames } from '../../core/invalid-option.js';

// `answer` names what a resource route answers, for the wire profiles (wire-profile.ts); OAuth answers follow
// RFC 6749 whatever the profile.
const ROUTES: readonly (Route & { answer?: AnswerShape })[] = [
  { method: 'GET', path: '/oauth/authorize', handle: (ctx, _req, _p, url) => authorize(ctx, url) },
  { method: 'POST', path: '/oauth/authorize', handle: (ctx, req) => answerConsent(ctx, req) },
  { method: 'POST', path: '/oauth/token', handle: (ctx, req) => token(ctx, req) },
  { method: 'POST', path: '/oauth/revoke', handle: (ctx, req) => revokeToken(ctx, req) },
  { method: 'GET', path: '/accounts', handle: listAccounts, answer: { kind: 'account', page: true } },
  { method: 'GET', path: '/accounts/{id}', handle: getAccount, answer: { kind: 'account' } },
  { method: 'GET', path: '/posts', handle: listPosts, answer: { kind: 'post', page: true } },
  { method: 'POST', path: '/posts', handle: createPost, answer: { kind: 'post' } },
  { method: 'GET', path: '/posts/{id}', handle: getPost, answer: { kind: 'post' } },
  { method: 'PATCH', path: '/posts/{id}', handle: updatePost, answer: { kind: 'post' } },
  { method: 'DELETE', path: '/posts/{id}', handle: deletePost, answer: { kind: 'post' } },
  { method: 'GET', path: '/posts/{id}/analytics', handle: getAnalytics, answer: { kind: 'postAnalytics' } },
  { method: 'POST', path: '/media', handle: uploadMedia, answer: { kind: 'mediaItem' } },
];

/**
 * The part of msw's `http` namespace the fake needs. Taking it as a parameter (instead of importing msw)
 * keeps msw an optional peer, keeps `mswHandlers` synchronous, and builds the handlers with the very msw copy
 * the test's `setupServer` uses (msw checks handlers by class).
 */
export interface MswHttpLike<H> {
  /** msw's `http.all(path, resolver)`. */
  all(path: string, resolver: (info: { request: Request }) => Promise<Response>): H;
}

/** The RFC 6749 §5.1 token answer that `issueTokens` returns. */
export interface IssuedTokens {
  /** The bearer token: pass it as the client's `auth`. */
  access_token: string;
  /** Always `Bearer`. */
  token_type: 'Bearer';
  /** Seconds until the access token expires (fake clock). */
  expires_in: number;
  /** A refresh token for the same grant. */
  refresh_token: string;
  /** The granted scopes, space-separated. */
  scope: string;
}

/** A grant as `fake.grantOf` shows it: a copy, taken when called. */
export interface FakeGrant {
  /** `grant_…` */
  id: string;
  /** Every token of the grant is refused: reuse detection, or an authorization code used twice. */
  revoked: boolean;
  /** When the grant ends (`refreshPolicy.grantLifetimeMs`), epoch ms of the fake clock; absent: never. */
  endsAt?: number;
  /** Token requests naming this grant's code or refresh tokens, refused ones included. */
  tokenRequests: number;
  /** Rotated-out refresh tokens of this grant sent again outside any window. */
  reuseEvents: number;
}

/**
 * A running fake of the Post Scheduling Service. See {@link createFakeService}.
 *
 * @example
 * const fake = createFakeService({ apps: [app] });
 * const { url } = await fake.listen();          // http://127.0.0.1:<port>
 * // ... drive your code against `url` ...
 * await fake.clock.advance(60_000);             // publishes posts due within the minute
 * expect(fake.deliveries.map((d) => d.event)).toContain('post.published');
 * await fake.close();
 */
export interface FakeService {
  /** The base URL (and RFC 9207 issuer). After `listen()`, the loopback URL. */
  readonly baseUrl: string;
  /** Answers one request, like a `fetch` handler (Bun.serve, Deno.serve, workers, msw). */
  handler(request: Request): Promise<Response>;
  /** msw handlers for every request under the base URL: `setupServer(...fake.mswHandlers(http))`. */
  mswHandlers<H>(http: MswHttpLike<H>): H[];
  /** Serves the fake on 127.0.0.1 (Node only); `port` 0 (default) picks a free one. */
  listen(port?: number): Promise<ListeningFakeService>;
  /** The fake's clock: token expiry, publication and webhook retries follow it. */
  readonly clock: FakeClock;
  /** Every webhook delivery attempt so far, in the order they finished. */
  readonly deliveries: readonly WebhookDelivery[];
  /** Fault injection (429, 5xx, hang, reset, latency). */
  readonly faults: FakeFaults;
  /** Counters: token requests by grant type, posts created, requests per route, grant revocations and reuses. */
  readonly stats: FakeStats;
  /** Registers an app; returns its credentials (generated when omitted). */
  registerApp(input: AppInput): RegisteredApp;
  /** Adds a connected account. */
  seedAccount(input?: AccountInput): FakeAccount;
  /** Makes posts targeting `accountId` end `failed` (or, with `false`, publish normally again). */
  failPublicationFor(accountId: string, fail?: boolean): void;
  /** Registers a webhook endpoint; returns it with its secret (generated when omitted). */
  registerWebhookEndpoint(input: WebhookEndpointInput): WebhookEndpoint;
  /** Sets what the user answers at `/oauth/authorize` (see the `consent` option). */
  setConsent(consent: ConsentMode): void;
  /**
   * Issues tokens directly, skipping the browser step, as the token endpoint's wire answer (RFC 6749 §5.1,
   * snake_case): pass `access_token` as a client's `auth`. Default: every scope. For a `TokenSet` (what
   * `TokenManager` and a `TokenStore` hold), use {@link FakeService.issueTokenSet} instead of converting by hand.
   */
  issueTokens(input?: { clientId?: string; scopes?: string[] }): IssuedTokens;
  /**
   * Issues tokens directly as a `TokenSet`, the SDK's own shape, exactly as `oauth.exchangeCode()` would return
   * them: ready for `manager.setTokens()` or `store.set()`. `expiresAt` counts from now on the local clock, as
   * the SDK counts it.
   *
   * @example
   * await new FileTokenStore(path).set(fake.issueTokenSet({ clientId: app.clientId }))
   * await store.set({ ...fake.issueTokenSet(), expiresAt: Date.now() - 1 }) // expired: the next call refreshes
   */
  issueTokenSet(input?: { clientId?: string; scopes?: string[] }): TokenSet;
  /**
   * The grant (one user's consent) that issued `token`, a refresh or access token: its counters and whether it is
   * revoked, as of now. `undefined` for a token the fake never issued.
   *
   * @example
   * expect(fake.grantOf(tokens.refreshToken)).toMatchObject({ revoked: false, tokenRequests: 2, reuseEvents: 0 });
   */
  grantOf(token: string): FakeGrant | undefined;
  /** A post as the fake holds it, or `undefined`. */
  getPost(id: string): FakePost | undefined;
  /** An upload as the fake holds it (metadata and the kept prefix), or `undefined`. */
  getMedia(id: string): StoredMedia | undefined;
  /** Waits for webhook attempts in flight (retries come with `clock.advance`). */
  flushWebhooks(): Promise<void>;
  /** Stops timers, releases hanging requests, aborts deliveries, closes every `listen()` server. */
  close(): Promise<void>;
}

const FAKE_SERVICE_OPTIONS = /* @__PURE__ */ optionNames<FakeServiceOptions>({
  baseUrl: 0, clock: 0, apps: 0, accounts: 0, webhookEndpoints: 0, consent: 0, webhooks: 0, media: 0, accessTokenTtlSeconds: 0, codeTtlSeconds: 0, refreshTokenReuse: 0, refreshPolicy: 0, profile: 0, seed: 0,
});

/**
 * Creates an in-memory fake of the Post Scheduling Service, strict enough to catch a client that gets the
 * protocol wrong (OAuth with PKCE S256, bearer scopes, wire-format errors, signed webhooks). Its `profile` option
 * (`'full'`, `'minimal'`, `'noisy'` with a `seed`) sets how much of each answer it sends, to try a client against a
 * service that sends only what the spec shows, or garbles the rest (see `FakeServiceOptions.profile`).
 *
 * @example
 * import { setupServer } from 'msw/node';
 * import { http } from 'msw';
 * import { createFakeService } from '@postsched/sdk/testing';
 *
 * const fake = createFakeService({ baseUrl: 'https://api.postsched.test' });
 * const server = setupServer(...fake.mswHandlers(http));
 * server.listen();
 * const { access_token } = fake.issueTokens({ scopes: ['posts:write'] });
 */
export function createFakeService(options: FakeServiceOptions = {}): FakeService {
  options = checkOptions(options, FAKE_SERVICE_OPTIONS, 'createFakeService()');
  const profile = options.profile ?? 'full';
  if (!WIRE_PROFILES.includes(profile)) throw new TypeError(`createFakeService: profile must be one of ${WIRE_PROFILES.join(', ')}`);
  if (options.seed !== undefined && !Number.isSafeInteger(options.seed)) throw new TypeError('createFakeService: seed must be an integer');
  const shapeAnswer = answerShaper(profile, options.seed ?? 1);
  const state = new State();
  state.consent = options.consent ?? 'approve';
  const base = new URL(options.baseUrl ?? 'https://api.postsched.test');
  const basePath = base.pathname.replace(/\/+$/, '');
  let baseUrl = `${base.origin}${basePath}`;
  const dispatcher: WebhookDispatcher = new WebhookDispatcher(state, (): Scheduler => clock, options.webhooks);
  const clockOptions = typeof options.clock === 'string' ? { mode: options.clock } : (options.clock ?? {});
  const clock: Scheduler = new Scheduler(clockOptions, () => dispatcher.flush());
  const faults = new FaultInjector(clock);
  const servers = new Set<ListeningFakeService>();
  const stats: FakeStats = {
    tokenRequests: { authorization_code: 0, refresh_token: 0, other: 0 },
    postsCreated: 0,
    answersDropped: 0,
    requests: {},
    grants: { revocations: 0, reuseEvents: 0 },
  };
  const ctx: Context = {
    state,
    clock,
    stats,
    issuer: () => baseUrl,
    emit: (event, post) => dispatcher.emit(event, post),
    accessTokenTtlMs: (options.accessTokenTtlSeconds ?? 3600) * 1000,
    codeTtlMs: (options.codeTtlSeconds ?? 60) * 1000,
    refreshPolicy: resolveRefreshPolicy(options.refreshPolicy, options.refreshTokenReuse === 'revoke-grant'),
    media: { keepBytes: options.media?.keepBytes ?? 64 * 1024, ...pick(options.media?.onChunk) },
  };

  async function handler(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const under = url.pathname === basePath || url.pathname.startsWith(`${basePath}/`);
    const path = under ? url.pathname.slice(basePath.length) || '/' : url.pathname;
    const match = matchRoute(under ? ROUTES : [], method, path);
    const counter = `${method} ${match.template}`;
    stats.requests[counter] = (stats.requests[counter] ?? 0) + 1;
    const route = match.route as (typeof ROUTES)[number] | undefined;
    // The route's own answer, error answers included, so that an after-commit fault holds or drops any of them.
    let acted = false;
    const act = async (): Promise<Response> => {
      acted = true;
      try {
        if (route !== undefined) return await reshape(await route.handle(ctx, request, match.params, url), route.answer);
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        return error.response;
      }
      return match.allowed.length > 0
        ? apiError(405, 'method_not_allowed', `${method} is not allowed here; use ${match.allowed.join(', ')}.`, {
            headers: { allow: match.allowed.join(', ') },
          })
        : apiError(404, 'not_found', `No route ${method} ${path.slice(0, 200)}.`);
    };
    // A reset or an abort (hang) rejects: the caller drops the connection. A reset after the route acted loses its answer.
    const response = await faults.run(method, match.template, path, request.signal, act).catch((error: unknown) => {
      if (acted && error instanceof ConnectionResetFault) stats.answersDropped++;
      throw error;
    });
    // Copy into a fresh Response so the headers are mutable whatever built the answer.
    const headers = new Headers(response.headers);
    headers.set('x-request-id', randomId('req'));
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }

  /** A 2xx JSON answer of a resource route, rewritten for the wire profile. */
  async function reshape(response: Response, answer: AnswerShape | undefined): Promise<Response> {
    if (shapeAnswer === undefined || answer === undefined || !response.ok) return response;
    const body: unknown = JSON.parse(await response.text());
    return new Response(JSON.stringify(shapeAnswer(body, answer)), { status: response.status, headers: response.headers });
  }

  const fake: FakeService = {
    get baseUrl() {
      return baseUrl;
    },
    handler,
    mswHandlers<H>(http: MswHttpLike<H>): H[] {
      return [
        http.all(`${base.origin}${basePath}/*`, async ({ request }) => {
          try {
            return await handler(request);
          } catch (error) {
            // Response.error() is how msw makes the client's fetch reject as on a dropped connection.
            if (error instanceof ConnectionResetFault) return Response.error();
            throw error;
          }
        }),
      ];
    },
    async listen(port = 0) {
      const { listenOnLoopback } = await import('./listen.js');
      const server = await listenOnLoopback(handler, port, basePath);
      servers.add(server);
      baseUrl = server.url; // the issuer is the URL clients actually use (RFC 9207 §2)
      return server;
    },
    clock,
    get deliveries() {
      return dispatcher.deliveries;
    },
    faults,
    stats,
    registerApp(input) {
      for (const uri of input.redirectUris) {
        if (!URL.canParse(uri)) throw new TypeError('registerApp: every redirect URI must be an absolute URL');
      }
      const app = {
        clientId: input.clientId ?? randomId('client'),
        clientSecret: input.clientSecret ?? randomId('secret', 24),
        redirectUris: [...input.redirectUris],
        ...(input.name === undefined ? {} : { name: input.name }),
      };
      state.apps.set(app.clientId, app);
      return { ...app, redirectUris: [...app.redirectUris] };
    },
    seedAccount(input = {}) {
      const account = { id: input.id ?? randomId('acc'), platform: input.platform ?? 'x', name: input.name ?? 'Test account' };
      state.accounts.set(account.id, account);
      if (input.failPublication === true) state.failingAccounts.add(account.id);
      return { ...account };
    },
    failPublicationFor(accountId, fail = true) {
      if (fail) state.failingAccounts.add(accountId);
      else state.failingAccounts.delete(accountId);
    },
    registerWebhookEndpoint(input) {
      if (!URL.canParse(input.url)) throw new TypeError('registerWebhookEndpoint: url must be an absolute URL');
      const events = input.events ?? [...WEBHOOK_EVENT_TYPES];
      const unknown = events.find((e) => !WEBHOOK_EVENT_TYPES.includes(e));
      if (unknown !== undefined) throw new TypeError(`registerWebhookEndpoint: unknown event type ${unknown}`);
      const endpoint = { id: randomId('we'), url: input.url, secret: input.secret ?? randomId('whsec', 24), events: [...events] };
      state.endpoints.set(endpoint.id, endpoint);
      return { ...endpoint, events: [...endpoint.events] };
    },
    setConsent(consent) {
      state.consent = consent;
    },
    issueTokens(input = {}) {
      const clientId = input.clientId ?? 'fake_direct_client';
      const scopes = input.scopes ?? ['accounts:read', 'posts:read', 'posts:write', 'media:write', 'analytics:read'];
      const grant = createGrant(ctx, clientId, scopes);
      return mintTokens(ctx, grant, grant.scopes) as IssuedTokens;
    },
    issueTokenSet(input = {}) {
      const sentAt = Date.now();
      const issued = fake.issueTokens(input);
      // The SDK's own normalization (oauth4webapi hands it `token_type` lower-cased).
      return toTokenSet({ ...issued, token_type: 'bearer' }, { sentAt, fallbackScopes: [] });
    },
    grantOf(token) {
      const grant = (state.refreshTokens.get(token) ?? state.accessTokens.get(token))?.grant;
      if (grant === undefined) return undefined;
      const { id, revoked, endsAt, tokenRequests, reuseEvents } = grant;
      return { id, revoked, tokenRequests, reuseEvents, ...(endsAt === undefined ? {} : { endsAt }) };
    },
    getPost: (id) => state.posts.get(id),
    getMedia: (id) => state.media.get(id),
    flushWebhooks: () => dispatcher.flush(),
    async close() {
      clock.close();
      faults.close();
      dispatcher.close();
      await Promise.all([...servers].map((s) => s.close()));
      await dispatcher.flush();
    },
  };

  for (const app of options.apps ?? []) fake.registerApp(app);
  for (const account of options.accounts ?? DEMO_ACCOUNTS) fake.seedAccount(account);
  for (const endpoint of options.webhookEndpoints ?? []) fake.registerWebhookEndpoint(endpoint);
  return fake;
}

function pick<T>(onChunk: T | undefined): { onChunk?: T } {
  return onChunk === undefined ? {} : { onChunk };
}

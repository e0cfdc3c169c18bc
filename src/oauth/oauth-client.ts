/**
 * The OAuth 2.0 authorization-code flow with PKCE against the service (spec 4.1, 4.2), on oauth4webapi.
 * This file only wires the service's fixed endpoints and the SDK's errors and TokenSet around it.
 */
import * as oauth from 'oauth4webapi';
import { checkBaseUrl } from '../core/base-url.js';
import { OAuthCallbackError } from './errors.js';
import { inspectAs } from './inspect.js';
import { mapCallbackError, mapRequestError, mapResponseError, repeatedParameter, type Grant } from './map-error.js';
import { forProcessing, toTokenSet } from './normalize.js';
import { checkScopes } from './scopes.js';
import { createTokenFetch, type FetchLike } from './token-fetch.js';
import { userAgent } from '../core/user-agent.js';
import type { Scope, TokenSet } from './types.js';
import { checkOptions, constructorOptions, integerOption, invalidOption, MAX_TIMEOUT_MS, optionalFunction, optionNames } from '../core/invalid-option.js';

/** Default time-out of one token request, body included. */
const DEFAULT_TIMEOUT_MS = 30_000;

/** Options of {@link OAuthClient}. */
export interface OAuthClientOptions {
  /**
   * The service's base URL, the one the clients take; the endpoints are `{baseUrl}/oauth/authorize` and
   * `{baseUrl}/oauth/token`.
   * Must be `https:`; plain `http:` is accepted only for `localhost`, `127.0.0.1` and `[::1]` (development, tests).
   * @example 'https://api.postsched.example'
   */
  baseUrl: string | URL;
  /** The registered app's client_id (dashboard). */
  clientId: string;
  /** The registered app's client_secret. Kept in a private field; never printed, serialized or put in an error. */
  clientSecret: string;
  /** The app's callback address, exactly as registered; sent as `redirect_uri`. */
  redirectUri: string | URL;
  /**
   * The issuer identifier an RFC 9207 `iss` in the callback must equal. The spec does not name one, so the
   * default is `baseUrl` (without a trailing slash); set this if the service reports a different value.
   */
  issuer?: string;
  /**
   * The fetch used for token requests: pass one for proxies, custom agents or tests. Default: the global `fetch`,
   * looked up on each request.
   */
  fetch?: FetchLike;
  /**
   * Time-out of one token request, from sending to the last byte of the answer, in ms. Default 30 000.
   * Exceeding it throws `TimeoutError`.
   */
  timeoutMs?: number;
  /**
   * The service's token revocation endpoint (RFC 7009), if it has one: the spec shows none (README, "Assumptions").
   * A path under `baseUrl` (`'/oauth/revoke'`) or an absolute URL. With it, `revoke()` (and `users.disconnect()`)
   * revokes the refresh token at the service; without it, they send nothing.
   */
  revocationEndpoint?: string | URL;
}

const OAUTH_CLIENT_OPTIONS = /* @__PURE__ */ optionNames<OAuthClientOptions>({ baseUrl: 0, clientId: 0, clientSecret: 0, redirectUri: 0, issuer: 0, fetch: 0, timeoutMs: 0, revocationEndpoint: 0 });

/** What {@link OAuthClient.createAuthorizationUrl} returns. Keep `state` and `codeVerifier` server-side (session). */
export interface AuthorizationRequest {
  /** Where to redirect the user's browser. */
  url: string;
  /** The CSRF guard the callback must echo (RFC 6749 §10.12). */
  state: string;
  /** The PKCE secret (RFC 7636 §4.1); the URL carries only its S256 hash. Never send it to the browser. */
  codeVerifier: string;
  /** The scopes asked for; pass them back to `exchangeCode` so the TokenSet lists them if the answer has no `scope`. */
  scopes: Scope[];
}

/** The values saved when the authorization started; the whole {@link AuthorizationRequest} may be passed. */
export interface CallbackChecks {
  /** The `state` that `createAuthorizationUrl` returned: the callback must echo it. */
  state: string;
  /** The PKCE verifier that `createAuthorizationUrl` returned, sent with the code. */
  codeVerifier: string;
  /** The scopes asked for, used when the token answer has no `scope` (RFC 6749 §5.1). */
  scopes?: readonly string[];
}

/**
 * The service's OAuth 2.0 client: builds the authorization URL, turns the callback into tokens and refreshes
 * them. Uses PKCE with S256 only (RFC 7636) and sends `client_id` and `client_secret` as form fields (spec 4.2).
 *
 * @example
 * const oauth = new OAuthClient({ baseUrl, clientId, clientSecret, redirectUri: 'https://app.example/callback' })
 * // 1. Login route: remember state + verifier in the session, redirect the browser.
 * const pending = await oauth.createAuthorizationUrl({ scopes: ['posts:read', 'posts:write'] })
 * session.oauth = pending
 * res.redirect(pending.url)
 * // 2. Callback route: check the callback and exchange the code.
 * const tokens = await oauth.exchangeCode(new URL(req.url, 'https://app.example'), session.oauth)
 */
export class OAuthClient {
  // The public fields are `declare`d (no field initializer emitted) and set by the constructor, in this order.
  /** The validated base URL, without a trailing slash. */
  declare readonly baseUrl: string;
  /** The registered app's client_id. */
  declare readonly clientId: string;
  /** The callback address sent as `redirect_uri`. */
  declare readonly redirectUri: string;
  /** The time-out of one token request, in ms (`timeoutMs`). */
  declare readonly timeoutMs: number;
  // The secret lives only inside oauth4webapi's ClientSecretPost closure, held in a private field.
  readonly #clientAuth: oauth.ClientAuth;
  /** Kept only to cut it out of any server text the SDK quotes. */
  readonly #clientSecret: string;
  readonly #as: oauth.AuthorizationServer;
  readonly #client: oauth.Client;
  readonly #requestOptions: oauth.TokenEndpointRequestOptions;

  constructor(options: OAuthClientOptions) {
    options = constructorOptions(options, OAUTH_CLIENT_OPTIONS, 'new OAuthClient()', '{ baseUrl, clientId, clientSecret, redirectUri }');
    const base = checkBaseUrl(options.baseUrl);
    requireString(options.clientId, 'clientId');
    requireString(options.clientSecret, 'clientSecret');
    const redirectUri = checkRedirectUri(options.redirectUri);
    if (options.issuer !== undefined) requireString(options.issuer, 'issuer');
    const timeoutMs = integerOption(options.timeoutMs, 'timeoutMs', DEFAULT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
    optionalFunction(options.fetch, 'fetch');

    this.baseUrl = base.href;
    this.clientId = options.clientId;
    this.redirectUri = redirectUri;
    this.timeoutMs = timeoutMs;
    this.#clientSecret = options.clientSecret;
    this.#clientAuth = oauth.ClientSecretPost(options.clientSecret); // spec 4.2: client_id + client_secret as form fields
    this.#as = {
      issuer: options.issuer ?? base.href,
      authorization_endpoint: `${base.href}/oauth/authorize`,
      token_endpoint: `${base.href}/oauth/token`,
      ...(options.revocationEndpoint === undefined ? {} : { revocation_endpoint: revocationEndpoint(options.revocationEndpoint, base.href) }),
    };
    this.#client = { client_id: options.clientId };
    const agent = userAgent(undefined);
    this.#requestOptions = {
      [oauth.customFetch]: createTokenFetch(options.fetch, timeoutMs),
      // Checked above: only a loopback http base URL gets here with http.
      [oauth.allowInsecureRequests]: base.insecureLoopback,
      // The SDK's User-Agent, as on API calls (oauth4webapi would name itself); none in a browser.
      ...(agent && { headers: { 'user-agent': agent } }),
    };
    // Shown by console.log / util.inspect: everything but the secret.
    inspectAs(this, () => `OAuthClient { baseUrl: '${this.baseUrl}', clientId: '${this.clientId}', redirectUri: '${this.redirectUri}', clientSecret: [redacted] }`);
  }

  /**
   * Builds the URL to send the user's browser to (spec 4.1, RFC 7636 S256). Validates `scopes` first.
   *
   * @example
   * const { url, state, codeVerifier } = await oauth.createAuthorizationUrl({ scopes: ['accounts:read'] })
   */
  async createAuthorizationUrl(params: { scopes: readonly Scope[]; state?: string }): Promise<AuthorizationRequest> {
    // Own properties only: an `Object.prototype.state` set by other code must never become a fixed CSRF state.
    const { scopes: asked, state: given } = checkOptions(params ?? {}, ['scopes', 'state'], 'createAuthorizationUrl()');
    const scopes = checkScopes(asked);
    if (given !== undefined) requireString(given, 'state');
    const state = given ?? oauth.generateRandomState(); // 32 random bytes, base64url
    const codeVerifier = oauth.generateRandomCodeVerifier(); // 32 random bytes, base64url (RFC 7636 §4.1)
    // The base URL has no query (checked), so the parameters are the whole query, in this order.
    const query = new URLSearchParams({
      client_id: this.clientId,
      redirect_uri: this.redirectUri,
      response_type: 'code',
      scope: scopes.join(' '), // URLSearchParams writes the spaces as `+` (spec 4.1)
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256', // RFC 7636 §4.3; `plain` is never offered
    });
    return { url: `${this.#as.authorization_endpoint}?${query}`, state, codeVerifier, scopes };
  }

  /**
   * Checks the callback to `redirect_uri` and exchanges its code for tokens.
   * Checks, in order: `iss` when present (RFC 9207), `state` (RFC 6749 §10.12), an `error=` redirect
   * (→ `OAuthError`), then posts the code with the PKCE verifier (RFC 7636 §4.5).
   *
   * @param callback The full callback URL (string or `URL`; a path such as `/callback?code=…` is resolved
   *   against `redirectUri`), or its query parameters.
   * @param checks The `state` and `codeVerifier` saved by `createAuthorizationUrl` (the whole object may be passed).
   * @example
   * const tokens = await oauth.exchangeCode(req.originalUrl, session.oauth)
   * await manager.setTokens(tokens)
   */
  async exchangeCode(callback: string | URL | URLSearchParams, checks: CallbackChecks): Promise<TokenSet> {
    if (typeof checks !== 'object' || checks === null) {
      invalidOption(
        'checks',
        `must be the { state, codeVerifier } saved by createAuthorizationUrl(), got ${String(checks)}. ` +
          'Often the session that saved them was lost: its cookie was not sent back with the callback (a `secure` cookie over http, SameSite), ' +
          'or the callback reached another host or port than the one that started the flow (localhost vs 127.0.0.1): start it where the redirect URI points.',
      );
    }
    checks = checkOptions(checks); // own properties only; the whole AuthorizationRequest (with its url) may be passed
    requireString(checks.state, 'state');
    requireString(checks.codeVerifier, 'codeVerifier');
    const fallbackScopes = scopeNames(checks.scopes, 'scopes');
    const parameters = this.#callbackParameters(callback);
    // Before anything reads them (the `iss` line below would fold a repeated one into one).
    const repeated = repeatedParameter(parameters);
    if (repeated !== undefined) throw repeated;
    // oauth4webapi reads an empty `iss` as none; RFC 9207 §2.4: one that is present must equal the issuer.
    if (parameters.get('iss') === '') parameters.set('iss', ' ');
    let validated: URLSearchParams;
    try {
      validated = oauth.validateAuthResponse(this.#as, this.#client, parameters, checks.state);
    } catch (error) {
      throw mapCallbackError(error, parameters, this.#as.issuer);
    }
    return this.#tokenRequest(
      'authorization_code',
      { fallbackScopes },
      [validated.get('code') ?? '', checks.codeVerifier],
      (options) =>
        oauth.authorizationCodeGrantRequest(this.#as, this.#client, this.#clientAuth, validated, this.redirectUri, checks.codeVerifier, options),
    );
  }

  /**
   * Gets a new access token with the refresh token (spec 4.2, RFC 6749 §6). Pass the previous TokenSet when you
   * have it: its refresh token is kept if the answer has none, and its scopes if the answer has no `scope`.
   * Throws `ReauthorizationRequiredError` when the service answers `invalid_grant`.
   *
   * @example
   * const fresh = await oauth.refresh(tokens)            // keeps tokens.refreshToken / tokens.scopes as needed
   * const fresh2 = await oauth.refresh('rt_…')           // scopes [] when the answer has no `scope`
   */
  async refresh(previous: string | TokenSet): Promise<TokenSet> {
    const refreshToken = typeof previous === 'string' ? previous : previous?.refreshToken;
    if (typeof refreshToken !== 'string' || refreshToken === '') {
      invalidOption('refreshToken', 'is missing: pass a refresh token, or a TokenSet that has one.');
    }
    const fallbackScopes = typeof previous === 'string' ? [] : scopeNames(previous.scopes, 'scopes');
    return this.#tokenRequest(
      'refresh_token',
      { fallbackScopes, previousRefreshToken: refreshToken },
      [refreshToken],
      (options) => oauth.refreshTokenGrantRequest(this.#as, this.#client, this.#clientAuth, refreshToken, options),
    );
  }

  /**
   * Revokes the refresh token of `tokens` (or the token given) at the service's `revocationEndpoint` (RFC 7009): the
   * service ends the grant. Resolves `true` once the service confirmed, `false` at once, sending nothing, when the
   * client has no `revocationEndpoint`. A refused revocation is an `OAuthError`.
   *
   * @example
   * await oauth.revoke(tokens) // the user disconnected the app
   */
  async revoke(tokens: TokenSet | string): Promise<boolean> {
    if (this.#as.revocation_endpoint === undefined) return false;
    const token = typeof tokens === 'string' ? tokens : (tokens?.refreshToken ?? tokens?.accessToken);
    if (typeof token !== 'string' || token === '') invalidOption('tokens', 'must be a TokenSet or a token to revoke.');
    const hint = typeof tokens !== 'string' && tokens.refreshToken === undefined ? 'access_token' : 'refresh_token';
    let response: Response;
    try {
      response = await oauth.revocationRequest(this.#as, this.#client, this.#clientAuth, token, { ...this.#requestOptions, additionalParameters: { token_type_hint: hint } });
    } catch (error) {
      throw mapRequestError(error);
    }
    try {
      await oauth.processRevocationResponse(response);
    } catch (error) {
      throw await mapResponseError(error, response.status, 'authorization_code', [this.#clientSecret, token]);
    }
    return true;
  }

  /**
   * One token request: timestamp, send, process, normalize, with every failure mapped to an SDK error. Both grants'
   * answers are RFC 6749 §5.1 token responses, read by oauth4webapi's one processor for them (the service is not an
   * OpenID provider: no id_token nonce or auth_time to check, and the OpenID code path would ship for nothing).
   */
  async #tokenRequest(
    grant: Grant,
    context: { fallbackScopes: readonly string[]; previousRefreshToken?: string },
    secrets: readonly string[],
    send: (options: oauth.TokenEndpointRequestOptions) => Promise<Response>,
  ): Promise<TokenSet> {
    // Assumptions: expiry counts from the moment the request left, so the clock is read before sending.
    const sentAt = Date.now();
    let response: Response;
    try {
      response = await send(this.#requestOptions);
    } catch (error) {
      throw mapRequestError(error);
    }
    let body: oauth.TokenEndpointResponse;
    try {
      body = await oauth.processGenericTokenEndpointResponse(this.#as, this.#client, forProcessing(response));
    } catch (error) {
      throw await mapResponseError(error, response.status, grant, [this.#clientSecret, ...secrets]);
    }
    return toTokenSet(body, { ...context, sentAt });
  }

  #callbackParameters(callback: string | URL | URLSearchParams): URLSearchParams {
    if (callback instanceof URLSearchParams) return new URLSearchParams(callback);
    if (callback instanceof URL) return new URLSearchParams(callback.searchParams);
    if (typeof callback === 'string') {
      if (callback.startsWith('?')) return new URLSearchParams(callback);
      try {
        return new URL(callback, this.redirectUri).searchParams;
      } catch {
        // The string is not echoed: it may hold the authorization code.
        throw new OAuthCallbackError('invalid_callback', 'The callback is not a URL. Pass the full callback URL, a URL object or its URLSearchParams.');
      }
    }
    invalidOption('callback', 'must be a URL string, a URL or URLSearchParams.');
  }

  /** What `JSON.stringify` shows: the public settings, never the client secret. */
  toJSON(): {
    /** The base URL. */
    baseUrl: string;
    /** The client_id. */
    clientId: string;
    /** The redirect URI. */
    redirectUri: string;
  } {
    return { baseUrl: this.baseUrl, clientId: this.clientId, redirectUri: this.redirectUri };
  }
}

function requireString(value: unknown, option: string): asserts value is string {
  if (typeof value !== 'string' || value.trim() === '') {
    invalidOption(option, 'must be a non-empty string.');
  }
}

/** Scopes for an answer without `scope`, checked before the request: its answer (a used code, a rotated refresh token) comes once. */
function scopeNames(value: unknown, option: string): readonly string[] {
  if (value == null) return [];
  if (!Array.isArray(value) || !value.every((scope) => typeof scope === 'string')) invalidOption(option, 'must be an array of scope names.');
  return value;
}

/** `revocationEndpoint`: a path under the base URL, or an absolute URL held to the base URL's rules. */
function revocationEndpoint(value: unknown, base: string): string {
  if (typeof value === 'string' && value.startsWith('/')) return `${base}${value}`;
  if (typeof value !== 'string' && !(value instanceof URL)) invalidOption('revocationEndpoint', "must be a path under baseUrl ('/oauth/revoke') or an absolute URL.");
  return checkBaseUrl(value, 'revocationEndpoint').href;
}

/** RFC 6749 §3.1.2: the redirection endpoint is an absolute URI; it is sent exactly as given. */
function checkRedirectUri(value: unknown): string {
  if (typeof value !== 'string' && !(value instanceof URL)) {
    invalidOption('redirectUri', 'must be the absolute callback URL registered for the app.');
  }
  const text = String(value);
  try {
    new URL(text);
  } catch {
    invalidOption('redirectUri', `is not an absolute URL: "${text}".`);
  }
  return text;
}

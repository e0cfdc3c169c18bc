/**
 * `POST /oauth/token` (spec 4.2, RFC 6749 §4.1.3 and §6, RFC 7636 §4.5–4.6). Strict on purpose: a client
 * that sends JSON, Basic auth instead of the spec's form fields, or a wrong verifier is told so here,
 * not by the real service in production.
 */
import type { Context } from './context.js';
import { json, MAX_BODY_BYTES, randomId, readBoundedText, s256, timingSafeEqual } from './http.js';
import { markUsed, refreshRefusal, revoke } from './refresh-policy.js';
import type { Grant, RefreshToken } from './state.js';

/** RFC 7636 §4.1: 43–128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** RFC 6749 §5.2 error answer, 401 for invalid_client, never cached. */
function tokenError(error: string, description: string, extra?: HeadersInit): Response {
  const headers = new Headers(extra);
  headers.set('cache-control', 'no-store');
  headers.set('pragma', 'no-cache');
  return json(error === 'invalid_client' ? 401 : 400, { error, error_description: description }, headers);
}

export async function token(ctx: Context, request: Request): Promise<Response> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    // Counted anyway, so a test sees that a malformed token request did leave the client.
    ctx.stats.tokenRequests.other++;
    return tokenError('invalid_request', 'Send the body as application/x-www-form-urlencoded (RFC 6749 §4.1.3).');
  }
  const text = await readBoundedText(request, MAX_BODY_BYTES);
  if (text === undefined) {
    ctx.stats.tokenRequests.other++;
    return tokenError('invalid_request', `The body is larger than ${MAX_BODY_BYTES} bytes.`);
  }
  const form = new URLSearchParams(text);
  const grantType = form.get('grant_type');
  if (grantType === 'authorization_code' || grantType === 'refresh_token') ctx.stats.tokenRequests[grantType]++;
  else ctx.stats.tokenRequests.other++;

  const dup = [...new Set(form.keys())].find((k) => form.getAll(k).length > 1);
  if (dup !== undefined) return tokenError('invalid_request', `Parameter ${dup} is repeated (RFC 6749 §3.2).`);
  // RFC 6749 §2.3: one authentication method per request; this service takes form fields (spec 4.2).
  if (request.headers.has('authorization')) {
    return tokenError(
      'invalid_client',
      'This service authenticates clients with client_id and client_secret form fields (spec 4.2), not an Authorization header.',
      { 'www-authenticate': 'Basic realm="postsched"' },
    );
  }
  const clientId = form.get('client_id');
  const clientSecret = form.get('client_secret');
  const app = clientId === null ? undefined : ctx.state.apps.get(clientId);
  if (app === undefined || clientSecret === null || !timingSafeEqual(clientSecret, app.clientSecret)) {
    return tokenError('invalid_client', 'Client authentication failed: unknown client_id or wrong client_secret.');
  }
  if (grantType === null) return tokenError('invalid_request', 'grant_type is required.');
  if (grantType === 'authorization_code') return exchangeCode(ctx, form, app.clientId);
  if (grantType === 'refresh_token') return refresh(ctx, form, app.clientId);
  return tokenError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
}

async function exchangeCode(ctx: Context, form: URLSearchParams, clientId: string): Promise<Response> {
  const code = form.get('code');
  const redirectUri = form.get('redirect_uri');
  const verifier = form.get('code_verifier');
  if (code === null) return tokenError('invalid_request', 'code is required.');
  if (redirectUri === null) return tokenError('invalid_request', 'redirect_uri is required (RFC 6749 §4.1.3).');
  if (verifier === null) return tokenError('invalid_request', 'code_verifier is required (PKCE, RFC 7636 §4.5).');
  if (!VERIFIER.test(verifier)) {
    return tokenError('invalid_request', 'code_verifier must be 43-128 unreserved characters (RFC 7636 §4.1).');
  }
  const record = ctx.state.codes.get(code);
  if (record === undefined || record.grant.clientId !== clientId) {
    return tokenError('invalid_grant', 'The authorization code is unknown or was issued to another client.');
  }
  record.grant.tokenRequests++;
  if (record.used) {
    // RFC 6749 §4.1.2: a code used twice revokes every token already issued from it.
    revoke(ctx, record.grant);
    return tokenError('invalid_grant', 'The authorization code was already used; tokens issued from it are revoked.');
  }
  if (ctx.clock.now() >= record.expiresAt) return tokenError('invalid_grant', 'The authorization code expired.');
  if (redirectUri !== record.redirectUri) {
    return tokenError('invalid_grant', 'redirect_uri differs from the one of the authorization request.');
  }
  if (!timingSafeEqual(await s256(verifier), record.codeChallenge)) {
    return tokenError('invalid_grant', 'code_verifier does not match the code_challenge (RFC 7636 §4.6).');
  }
  record.used = true;
  return issueTokens(ctx, record.grant, record.grant.scopes);
}

function refresh(ctx: Context, form: URLSearchParams, clientId: string): Response {
  const refreshToken = form.get('refresh_token');
  if (refreshToken === null) return tokenError('invalid_request', 'refresh_token is required.');
  const record = ctx.state.refreshTokens.get(refreshToken);
  if (record === undefined || record.grant.clientId !== clientId) {
    return tokenError('invalid_grant', 'The refresh token is unknown, or was issued to another client.');
  }
  record.grant.tokenRequests++;
  // The refresh policy (RFC 9700 §4.14.2): rotation, windows, reuse detection, lifetimes.
  const refused = refreshRefusal(ctx, record);
  if (refused !== undefined) return tokenError('invalid_grant', refused);
  let scopes = record.scopes;
  const scope = form.get('scope');
  if (scope !== null) {
    // RFC 6749 §6: a refresh may narrow the scope, never widen it.
    const asked = scope.split(' ');
    if (asked.some((s) => !record.scopes.includes(s))) {
      return tokenError('invalid_scope', 'scope asks for more than the original grant.');
    }
    scopes = asked;
  }
  markUsed(ctx, record, 'refresh');
  if (ctx.refreshPolicy.rotation === 'static') return issueTokens(ctx, record.grant, scopes, { keep: refreshToken });
  record.rotatedAt ??= ctx.clock.now(); // an overlap window counts from the first rotation
  return issueTokens(ctx, record.grant, scopes, ctx.refreshPolicy.rotation === 'retain-until-used' ? { predecessor: record } : {});
}

/** A refresh answer's refresh token: the one sent (`keep`, static policy), or a new one retiring `predecessor` on use. */
interface Successor {
  keep?: string;
  predecessor?: RefreshToken;
}

/** Issues an access token and a refresh token in the RFC 6749 §5.1 shape. */
export function issueTokens(ctx: Context, grant: Grant, scopes: string[], successor: Successor = {}): Response {
  return json(200, mintTokens(ctx, grant, scopes, successor), { 'cache-control': 'no-store', pragma: 'no-cache' });
}

/** The token answer's body (RFC 6749 §5.1); also used by `fake.issueTokens()` to skip the browser step. */
export function mintTokens(ctx: Context, grant: Grant, scopes: string[], successor: Successor = {}) {
  const now = ctx.clock.now();
  const accessToken = randomId('at', 24);
  const refreshToken = successor.keep ?? randomId('rt', 24);
  let record = ctx.state.refreshTokens.get(refreshToken);
  if (record === undefined) {
    record = { grant, scopes, lastUsedAt: now, retired: false, ...(successor.predecessor ? { predecessor: successor.predecessor } : {}) };
    ctx.state.refreshTokens.set(refreshToken, record);
  }
  // No access token outlives its grant: in the grant's last minutes `expires_in` is cut short.
  const ttlMs = Math.max(0, Math.min(ctx.accessTokenTtlMs, (grant.endsAt ?? Number.POSITIVE_INFINITY) - now));
  ctx.state.accessTokens.set(accessToken, { grant, scopes, expiresAt: now + ttlMs, refreshToken: record });
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: Math.floor(ttlMs / 1000),
    refresh_token: refreshToken,
    scope: scopes.join(' '),
  };
}

/**
 * `POST /oauth/revoke`: token revocation (RFC 7009), not shown in the spec (README, "Assumptions"). The client
 * authenticates as at the token endpoint; a refresh or access token of its own ends its whole grant (not counted in
 * `stats.grants.revocations`, which counts the service's own revocations). An unknown token is answered 200 (§2.2).
 */
export async function revokeToken(ctx: Context, request: Request): Promise<Response> {
  const form = new URLSearchParams((await readBoundedText(request, MAX_BODY_BYTES)) ?? '');
  const clientId = form.get('client_id');
  const clientSecret = form.get('client_secret');
  const app = clientId === null ? undefined : ctx.state.apps.get(clientId);
  if (app === undefined || clientSecret === null || !timingSafeEqual(clientSecret, app.clientSecret)) {
    return tokenError('invalid_client', 'Client authentication failed: unknown client_id or wrong client_secret.');
  }
  const token = form.get('token');
  if (token === null) return tokenError('invalid_request', 'token is required (RFC 7009 §2.1).');
  const grant = (ctx.state.refreshTokens.get(token) ?? ctx.state.accessTokens.get(token))?.grant;
  if (grant !== undefined && grant.clientId === app.clientId) grant.revoked = true;
  return new Response(null, { status: 200, headers: { 'cache-control': 'no-store' } });
}

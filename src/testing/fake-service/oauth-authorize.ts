/**
 * `GET /oauth/authorize` (spec 4.1, RFC 6749 §4.1.1, RFC 7636 §4.3). Consent is given by configuration
 * (`fake.setConsent`): `approve` and `deny` answer at once with a redirect carrying a code or an error, as tests
 * want; `prompt` shows a consent page, whose form (`POST /oauth/authorize`) answers with the same redirects.
 */
import { consentPage, htmlPage, readConsentForm } from './consent-page.js';
import type { Context } from './context.js';
import { json, randomId } from './http.js';
import { createGrant } from './refresh-policy.js';
import type { ConsentRequest } from './state.js';
import { SCOPES } from '../../oauth/types.js';

/** How long a consent page stays answerable, on the fake's clock. */
const CONSENT_TTL_MS = 10 * 60_000;
/** Unanswered consent pages kept at most; the oldest goes first. */
const MAX_PENDING_CONSENTS = 1_000;

/** RFC 7636 §4.2: an S256 challenge is BASE64URL of a 32-byte digest, 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function authorize(ctx: Context, url: URL): Response {
  const q = url.searchParams;
  // RFC 6749 §3.1: parameters MUST NOT be included more than once.
  const dup = [...new Set(q.keys())].find((k) => q.getAll(k).length > 1);

  // RFC 6749 §4.1.2.1: a bad client or redirect URI must NOT redirect (it could be an open redirector).
  const clientId = q.get('client_id');
  const app = clientId === null ? undefined : ctx.state.apps.get(clientId);
  if (dup === 'client_id' || app === undefined) {
    return noRedirect('invalid_client', 'client_id is missing, repeated or not a registered app.');
  }
  const redirectUri = q.get('redirect_uri');
  // RFC 6749 §3.1.2.3 / OAuth security BCP: exact string match against the registered URIs.
  if (dup === 'redirect_uri' || redirectUri === null || !app.redirectUris.includes(redirectUri)) {
    // Names the URI sent and the ones registered: the usual cause is a port, host or trailing slash of difference.
    const sent = dup === 'redirect_uri' ? 'is repeated' : redirectUri === null ? 'is missing' : `${JSON.stringify(redirectUri.slice(0, 200))} is not exactly one of them`;
    return noRedirect(
      'invalid_request',
      `The URIs registered for this client are ${app.redirectUris.join(', ')}, and redirect_uri ${sent}. ` +
        'Send one of them, or register yours (`postsched mock --redirect-uri <url>`, or the fake\'s `apps[].redirectUris`).',
    );
  }

  const state = q.get('state');
  const fail = (error: string, description: string) =>
    redirect(redirectUri, { error, error_description: description, state, iss: ctx.issuer() });

  if (dup !== undefined) return fail('invalid_request', `Parameter ${dup} is repeated (RFC 6749 §3.1).`);
  const responseType = q.get('response_type');
  if (responseType === null) return fail('invalid_request', 'response_type is required.');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
  // Spec 4.1: state is required; RFC 6749 makes it optional, this service does not.
  if (state === null || state === '') return fail('invalid_request', 'state is required and must not be empty.');
  const scope = q.get('scope');
  if (scope === null || scope === '') return fail('invalid_request', 'scope is required.');
  // RFC 6749 §3.3: scope tokens separated by one space (`+` in the query decodes to a space).
  const scopes = scope.split(' ');
  const unknown = scopes.find((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown !== undefined) {
    return fail('invalid_scope', `Unknown scope ${JSON.stringify(unknown.slice(0, 60))}; known: ${SCOPES.join(' ')}.`);
  }
  const challenge = q.get('code_challenge');
  const method = q.get('code_challenge_method');
  // RFC 7636 §4.4.1: missing PKCE or an unsupported method is invalid_request. This service requires S256.
  if (challenge === null) return fail('invalid_request', 'code_challenge is required (PKCE, RFC 7636).');
  if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256; plain is not accepted.');
  if (!S256_CHALLENGE.test(challenge)) {
    return fail('invalid_request', 'code_challenge must be 43 base64url characters (RFC 7636 §4.2).');
  }
  const request: ConsentRequest = {
    clientId: app.clientId,
    redirectUri,
    scopes: [...new Set(scopes)],
    state,
    codeChallenge: challenge,
    expiresAt: ctx.clock.now() + CONSENT_TTL_MS,
  };
  if (ctx.state.consent === 'deny') return deny(ctx, request);
  if (ctx.state.consent === 'approve') return approve(ctx, request);

  const pending = ctx.state.consentRequests;
  const consentId = randomId('consent', 24);
  pending.set(consentId, request);
  if (pending.size > MAX_PENDING_CONSENTS) pending.delete(pending.keys().next().value as string);
  return consentPage({ appName: app.name ?? app.clientId, scopes: request.scopes, redirectUri, action: url.pathname, consentId });
}

/** `POST /oauth/authorize`: the consent page's Allow or Deny. Each page answers once. */
export async function answerConsent(ctx: Context, request: Request): Promise<Response> {
  const form = await readConsentForm(request);
  const pending = form === undefined ? undefined : ctx.state.consentRequests.get(form.consentId);
  if (form === undefined || pending === undefined || ctx.clock.now() >= pending.expiresAt) {
    // Not a redirect: without a valid pending request there is no checked redirect_uri to send the user to.
    return htmlPage(400, 'Authorization expired', '<h1>This authorization request expired or was already answered</h1><p>Start again from the app.</p>');
  }
  if (form.decision !== 'allow' && form.decision !== 'deny') {
    return htmlPage(400, 'Unknown answer', '<h1>Choose Allow or Deny</h1>');
  }
  ctx.state.consentRequests.delete(form.consentId);
  return form.decision === 'allow' ? approve(ctx, pending) : deny(ctx, pending);
}

function approve(ctx: Context, request: ConsentRequest): Response {
  const code = randomId('code', 24);
  ctx.state.codes.set(code, {
    grant: createGrant(ctx, request.clientId, request.scopes),
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    expiresAt: ctx.clock.now() + ctx.codeTtlMs,
    used: false,
  });
  // RFC 6749 §4.1.2 (code, state) and RFC 9207 §2 (iss).
  return redirect(request.redirectUri, { code, state: request.state, iss: ctx.issuer() });
}

/** RFC 6749 §4.1.2.1: the user said no. */
function deny(ctx: Context, request: ConsentRequest): Response {
  return redirect(request.redirectUri, {
    error: 'access_denied',
    error_description: 'The user denied the request.',
    state: request.state,
    iss: ctx.issuer(),
  });
}

function redirect(target: string, params: Record<string, string | null>): Response {
  const url = new URL(target);
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return new Response(null, { status: 302, headers: { location: url.href, 'cache-control': 'no-store' } });
}

function noRedirect(error: string, description: string): Response {
  return json(400, { error, error_description: description }, { 'cache-control': 'no-store' });
}

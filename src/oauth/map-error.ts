/**
 * Maps oauth4webapi's errors to the SDK's. Their `cause` is never attached: oauth4webapi puts the callback
 * parameters (with the code) or the token response body (with the tokens) there. Only named, safe fields
 * are copied.
 */
import * as oauth from 'oauth4webapi';
import { PostSchedError } from '../core/base-error.js';
import { scrubSecrets } from '../core/scrub.js';
import { OAuthCallbackError, OAuthError, OAuthResponseError, ReauthorizationRequiredError, sentence } from './errors.js';

const TOKEN_ENDPOINT = 'Token endpoint answered';
const RESTART = 'start a new authorization; do not retry this callback.';

/** Which grant a token request used: `invalid_grant` means "authorize again" only for a refresh. */
export type Grant = 'authorization_code' | 'refresh_token';

/**
 * An error thrown while the token request was being made (before any answer): our own fetch errors pass
 * through; oauth4webapi's only request-side processing error is the missing `code`.
 */
export function mapRequestError(error: unknown): unknown {
  if (error instanceof PostSchedError) return error;
  if (error instanceof oauth.OperationProcessingError && error.code === oauth.INVALID_RESPONSE) {
    return new OAuthCallbackError(
      'missing_code',
      'Callback has no `code` nor `error` (RFC 6749 §4.1.2): pass the full callback URL or its query.',
    );
  }
  return error;
}

/** An error thrown while processing the token endpoint's answer (`status` is that answer's HTTP status). */
export async function mapResponseError(error: unknown, status: number, grant: Grant, secrets: readonly string[] = []): Promise<unknown> {
  if (error instanceof PostSchedError) return error;
  if (error instanceof oauth.ResponseBodyError) {
    // RFC 6749 §5.2 error body: copy its three standard fields, nothing else.
    return oauthError(
      grant,
      { error: error.error, error_description: stringOrUndefined(error.cause['error_description']), error_uri: stringOrUndefined(error.cause['error_uri']), status },
      secrets,
    );
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    // RFC 6749 §5.2: a 401 invalid_client may come with WWW-Authenticate; oauth4webapi stops at the header,
    // so the §5.2 body (left unread) is parsed here, falling back to the challenge's own `error` parameter.
    const body = await readErrorBody(error.response);
    const challenge = error.cause[0]?.parameters;
    const code = body?.error ?? challenge?.error;
    if (code !== undefined) {
      return oauthError(
        grant,
        { error: code, error_description: body?.error_description ?? challenge?.error_description, error_uri: body?.error_uri ?? challenge?.error_uri, status },
        secrets,
      );
    }
    return unexpectedStatus(status);
  }
  if (error instanceof oauth.OperationProcessingError) {
    switch (error.code) {
      case oauth.RESPONSE_IS_NOT_CONFORM:
        return unexpectedStatus(status);
      case oauth.RESPONSE_IS_NOT_JSON:
      case oauth.PARSE_ERROR:
        return new OAuthResponseError(
          'not_json',
          status,
          `${TOKEN_ENDPOINT} HTTP ${status}: body is not JSON (RFC 6749 §5).`,
        );
      default:
        // oauth4webapi's messages name the field, never its value ('"response" body "access_token" property must be a string').
        return new OAuthResponseError(
          'invalid_body',
          status,
          `${TOKEN_ENDPOINT} HTTP ${status}: not an RFC 6749 §5.1 token response: ${sentence(error.message)}`,
        );
    }
  }
  if (error instanceof oauth.UnsupportedOperationError) {
    return new OAuthResponseError(
      'unsupported_token_type',
      status,
      `${TOKEN_ENDPOINT} HTTP ${status}: unsupported (${error.message}); bearer tokens expected (RFC 6750).`,
    );
  }
  // Anything else came out of oauth4webapi's validation of the body; its cause may hold the body.
  return new OAuthResponseError(
    'invalid_body',
    status,
    `${TOKEN_ENDPOINT} HTTP ${status}: unprocessable answer (${error instanceof Error ? error.name : typeof error}).`,
  );
}

/**
 * Maps a failed `validateAuthResponse`. oauth4webapi checks `iss`, then `state`, then `error`; it reports the
 * first two with one error code, so the parameters are looked at again here only to name which check failed.
 */
export function mapCallbackError(error: unknown, parameters: URLSearchParams, issuer: string): unknown {
  if (error instanceof oauth.AuthorizationResponseError) {
    // RFC 6749 §4.1.2.1 error redirect: error, error_description, error_uri.
    return new OAuthError({
      error: error.error,
      error_description: parameters.get('error_description') ?? undefined,
      error_uri: parameters.get('error_uri') ?? undefined,
    });
  }
  if (error instanceof oauth.OperationProcessingError && error.code === oauth.INVALID_RESPONSE) {
    const iss = parameters.get('iss');
    if (iss !== null && iss !== issuer) {
      return new OAuthCallbackError(
        'issuer_mismatch',
        `Callback \`iss\` is not ${issuer} (RFC 9207 mix-up attack?): ${RESTART} If the service uses another issuer id, set \`issuer\`.`,
      );
    }
    if (parameters.get('state') === null) {
      return new OAuthCallbackError('missing_state', `Callback has no \`state\` (RFC 6749 §4.1.2): ${RESTART}`);
    }
    if (parameters.has('response')) {
      return new OAuthCallbackError('invalid_callback', 'Callback is a JARM response: unsupported; use a plain query response.');
    }
    return new OAuthCallbackError(
      'state_mismatch',
      `Callback \`state\` differs from this authorization's (RFC 6749 §10.12; forged, or a stale tab): ${RESTART}`,
    );
  }
  if (error instanceof oauth.UnsupportedOperationError) {
    return new OAuthCallbackError('invalid_callback', 'Callback carries tokens (implicit/hybrid flow): unsupported; use the code flow.');
  }
  return error;
}

/**
 * The error for a callback that repeats a parameter (RFC 6749 §3.1: "Request and response parameters MUST NOT be
 * included more than once"), or `undefined`; checked before oauth4webapi reads the callback. oauth4webapi refuses a
 * repeated `iss`, `state`, `error` or `response` itself, with one error code for all, but leaves a repeated `code` to
 * the token request, which would call it missing.
 */
export function repeatedParameter(parameters: URLSearchParams): OAuthCallbackError | undefined {
  const repeated = ['iss', 'state', 'error', 'code', 'response'].find((name) => parameters.getAll(name).length > 1);
  return repeated === undefined ? undefined : new OAuthCallbackError('invalid_callback', `Callback repeats \`${repeated}\`: each parameter may appear once.`);
}

function oauthError(
  grant: Grant,
  raw: { error: string; error_description: string | undefined; error_uri: string | undefined; status: number },
  secrets: readonly string[],
): OAuthError {
  // The server's own words are kept, but never a secret it echoes (the refresh token, the client secret, the code).
  const clean = (text: string | undefined) => (text === undefined ? undefined : scrubSecrets(text, secrets));
  const details = { error: clean(raw.error) as string, error_description: clean(raw.error_description), error_uri: clean(raw.error_uri), status: raw.status };
  if (grant === 'refresh_token' && details.error === 'invalid_grant') {
    // Assumptions: a refresh refused with invalid_grant means the user must authorize again.
    return new ReauthorizationRequiredError('invalid_grant', details);
  }
  return new OAuthError(details);
}

function unexpectedStatus(status: number): OAuthResponseError {
  return new OAuthResponseError(
    'unexpected_status',
    status,
    `${TOKEN_ENDPOINT} HTTP ${status} without an RFC 6749 §5.2 error body: is the service down, or baseUrl wrong?`,
  );
}

async function readErrorBody(
  response: Response,
): Promise<{ error: string; error_description: string | undefined; error_uri: string | undefined } | undefined> {
  try {
    const json: unknown = await response.json();
    if (typeof json !== 'object' || json === null) return undefined;
    const record = json as Record<string, unknown>;
    const error = stringOrUndefined(record['error']);
    if (error === undefined) return undefined;
    return { error, error_description: stringOrUndefined(record['error_description']), error_uri: stringOrUndefined(record['error_uri']) };
  } catch {
    return undefined;
  }
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

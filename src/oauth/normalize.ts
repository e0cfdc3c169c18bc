/**
 * Turns an RFC 6749 §5.1 token response into a TokenSet, following the Assumptions table of the README.
 */
import type { TokenEndpointResponse } from 'oauth4webapi';
import { responseText } from '../core/buffer-response.js';
import { isRecord } from '../core/is-record.js';
import { OAuthResponseError } from './errors.js';
import type { TokenSet } from './types.js';

/** Spec 5.3 and 8: "An access token expires after 1 hour"; used when the answer has no `expires_in`. */
export const DEFAULT_EXPIRES_IN_SECONDS = 3600;

/**
 * The longest lifetime believed, a year: a larger `expires_in` (`1e308`) would put `expiresAt` beyond what a
 * Date, JSON or Redis can hold (Infinity); a negative one is read as 0 (expired at once).
 */
export const MAX_EXPIRES_IN_SECONDS = 365 * 24 * 3600;

/** What the answer alone cannot say: when the request left, and what the previous state was. */
export interface NormalizeContext {
  /** `Date.now()` taken just before the request was sent. */
  readonly sentAt: number;
  /** Scopes asked for (code exchange) or held before (refresh): used when the answer has no `scope`. */
  readonly fallbackScopes: readonly string[];
  /** The refresh token sent with a refresh: kept when the answer has none (RFC 6749 §6). */
  readonly previousRefreshToken?: string | undefined;
}

/**
 * A 200 answer as oauth4webapi is to read it, without what it would refuse where the SDK can do without (a refused
 * answer loses the rotated refresh token it carries; the spec shows no token answer, so all but the tokens is our
 * assumption, tolerated): `id_token` (RFC 6749 §5.1: ignore what you do not know; the SDK is no OpenID client,
 * oauth4webapi would check it as one), an optional field that is `null` or unusable (an `expires_in` that is no
 * number, a `scope` that is no string: read as absent), an `expires_in` below 0 or past any number (clamped, as
 * `toTokenSet` clamps the rest), and a `token_type` that is no string (read as `bearer`, how the SDK sends it anyway).
 */
export function forProcessing(response: Response): Response {
  const { status } = response;
  let body: unknown;
  try {
    body = status === 200 || (status > 399 && status < 500) ? JSON.parse(responseText(response)) : undefined;
  } catch {}
  if (!isRecord(body)) return response;
  const { id_token: _, ...rest } = body;
  if (rest['refresh_token'] === null) delete rest['refresh_token'];
  if (typeof rest['scope'] !== 'string') delete rest['scope'];
  if (typeof rest['token_type'] !== 'string') rest['token_type'] = 'bearer';
  const expiresIn = typeof rest['expires_in'] === 'string' ? parseFloat(rest['expires_in']) : rest['expires_in'];
  if (typeof expiresIn !== 'number' || Number.isNaN(expiresIn)) delete rest['expires_in'];
  else rest['expires_in'] = Math.max(0, Math.min(expiresIn, MAX_EXPIRES_IN_SECONDS));
  // A JSON object is read whatever its content type, a §5.2 error body as a §5.1 answer (oauth4webapi checks the type on
  // errors only). The headers are bufferResponse's own copy, so they can be set.
  response.headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(rest), response);
}

/**
 * Normalizes a token response validated by oauth4webapi (which already lower-cases `token_type` and turns
 * a string `expires_in` into a number). Unknown fields are dropped: a TokenSet holds only what the SDK uses.
 */
export function toTokenSet(response: TokenEndpointResponse, context: NormalizeContext): TokenSet {
  if (response.token_type !== 'bearer') {
    // RFC 6750: the SDK only knows how to present bearer tokens; a DPoP or MAC token would be sent wrongly.
    throw new OAuthResponseError(
      'unsupported_token_type',
      200,
      `The token endpoint issued a "${response.token_type}" token; this SDK only supports bearer tokens (RFC 6750).`,
    );
  }
  // Expiry counts from when the request left, never from the server's clock or the response's arrival,
  // so a slow answer or a skewed server clock can only make a token look older, not fresher.
  const expiresIn = Math.min(Math.max(response.expires_in ?? DEFAULT_EXPIRES_IN_SECONDS, 0), MAX_EXPIRES_IN_SECONDS);
  const granted = typeof response.scope === 'string' ? response.scope.split(/\s+/).filter((s) => s !== '') : [];
  const refreshToken = response.refresh_token ?? context.previousRefreshToken;
  return {
    accessToken: response.access_token,
    ...(refreshToken === undefined ? {} : { refreshToken }),
    expiresAt: context.sentAt + expiresIn * 1000,
    // RFC 6749 §5.1: `scope` may be omitted when it equals the scope requested.
    scopes: granted.length > 0 ? granted : [...context.fallbackScopes],
    tokenType: 'bearer',
  };
}

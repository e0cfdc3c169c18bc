/**
 * Access-token checks for the resource routes (RFC 6750 §2.1 and §3.1), with the challenges written exactly
 * as the wire contract shows them.
 */
import type { Context } from './context.js';
import { apiError, HttpError } from './http.js';
import { markUsed } from './refresh-policy.js';
import type { AccessToken } from './state.js';

/**
 * Returns the request's access token when it is valid and holds `scope`; otherwise throws the 401 / 403
 * answer with its `WWW-Authenticate` challenge.
 */
export function requireScope(ctx: Context, request: Request, scope: string): AccessToken & { value: string } {
  const header = request.headers.get('authorization');
  // RFC 6750 §2.1: `Bearer` (case-insensitive scheme), one space, the token.
  const match = header === null ? null : /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header);
  if (match === null) {
    // RFC 6750 §3.1: a request without credentials gets a bare challenge, no error code.
    const headers = { 'www-authenticate': 'Bearer' };
    const problem = header === null ? 'No Authorization header' : 'The Authorization header is not "Bearer <token>"';
    throw new HttpError(apiError(401, 'unauthorized', `${problem}; send Authorization: Bearer <access token>.`, { headers }));
  }
  const value = match[1] as string;
  const record = ctx.state.accessTokens.get(value);
  if (record === undefined || record.grant.revoked || ctx.clock.now() >= record.expiresAt) {
    const reason = record === undefined || record.grant.revoked ? 'unknown or revoked' : 'expired';
    throw new HttpError(
      apiError(401, 'invalid_token', `The access token is ${reason}; refresh it and retry.`, {
        headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
      }),
    );
  }
  if (record.refreshToken !== undefined) markUsed(ctx, record.refreshToken, 'access');
  if (!record.scopes.includes(scope)) {
    throw new HttpError(
      apiError(403, 'insufficient_scope', `This call needs the ${scope} scope; authorize again asking for it.`, {
        headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
      }),
    );
  }
  return { ...record, value };
}

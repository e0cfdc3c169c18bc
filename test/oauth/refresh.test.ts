import { HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { OAuthError, ReauthorizationRequiredError, ValidationError } from '@postsched/sdk';
import { CLIENT_ID, CLIENT_SECRET, MARK, caught, expectNoSecretsInCollectedErrors, makeClient, tokenBody, useTokenEndpoint } from './helpers.js';

const endpoint = useTokenEndpoint();

describe('OAuthClient.refresh', () => {
  const previous = {
    accessToken: `at_${MARK}_old`,
    refreshToken: `rt_${MARK}_old`,
    expiresAt: 0,
    scopes: ['analytics:read'],
    tokenType: 'bearer' as const,
  };

  it('posts grant_type=refresh_token with client_id, client_secret and the refresh token', async () => {
    endpoint.answerJson(tokenBody(2));
    await makeClient().refresh(`rt_${MARK}_old`);
    expect(Object.fromEntries(endpoint.tokenRequests[0]!)).toEqual({
      grant_type: 'refresh_token',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      refresh_token: `rt_${MARK}_old`,
    });
  });

  it('keeps the old refresh token when the answer has none', async () => {
    const { refresh_token: _, ...body } = tokenBody(2);
    endpoint.answerJson(body);
    expect((await makeClient().refresh(`rt_${MARK}_old`)).refreshToken).toBe(`rt_${MARK}_old`);
    expect((await makeClient().refresh(previous)).refreshToken).toBe(`rt_${MARK}_old`);
  });

  it('takes the rotated refresh token when the answer has one', async () => {
    endpoint.answerJson(tokenBody(2));
    expect(await makeClient().refresh(previous)).toMatchObject({ accessToken: `at_${MARK}_2`, refreshToken: `rt_${MARK}_2` });
  });

  it('takes the rotated refresh token from an answer whose optional fields are null (read as absent), never refusing it', async () => {
    endpoint.answerJson(tokenBody(2, { scope: null, expires_in: null }));
    expect(await makeClient().refresh(previous)).toMatchObject({ refreshToken: `rt_${MARK}_2`, scopes: ['analytics:read'] });
    endpoint.answerJson(tokenBody(3, { refresh_token: null }));
    expect((await makeClient().refresh(previous)).refreshToken).toBe(`rt_${MARK}_old`);
  });

  it('takes the rotated refresh token from an answer whose optional fields are unusable (read as absent), never refusing it', async () => {
    for (const odd of [{ expires_in: 'soon' }, { expires_in: true }, { expires_in: {} }, { expires_in: '' }, { scope: ['posts:read'] }, { scope: 7 }]) {
      endpoint.answerJson(tokenBody(2, odd));
      const before = Date.now();
      const tokens = await makeClient().refresh(previous);
      expect(tokens).toMatchObject({ accessToken: `at_${MARK}_2`, refreshToken: `rt_${MARK}_2`, tokenType: 'bearer' });
      if ('scope' in odd) expect(tokens.scopes).toEqual(['analytics:read']);
      else expect(tokens.expiresAt).toBeGreaterThanOrEqual(before + 3_600_000); // the spec's 1 hour
    }
    const { token_type: _, ...untyped } = tokenBody(3); // RFC 6749 requires it; the SDK sends a bearer token anyway
    endpoint.answerJson(untyped);
    expect(await makeClient().refresh(previous)).toMatchObject({ refreshToken: `rt_${MARK}_3`, tokenType: 'bearer' });
  });

  it("keeps the previous TokenSet's scopes when the answer has no scope", async () => {
    const { scope: _, ...body } = tokenBody(2);
    endpoint.answerJson(body);
    expect((await makeClient().refresh(previous)).scopes).toEqual(['analytics:read']);
    expect((await makeClient().refresh(`rt_${MARK}_old`)).scopes).toEqual([]);
  });

  it('refuses scopes that are not a list of names before sending the refresh token, whose answer cannot be asked for twice', async () => {
    endpoint.answerJson(tokenBody(2));
    for (const scopes of ['posts:read', 42, [1]]) {
      expect(await caught(makeClient().refresh({ ...previous, scopes } as never))).toBeInstanceOf(ValidationError);
    }
    expect(endpoint.tokenRequests).toHaveLength(0);
    expect((await makeClient().refresh({ ...previous, scopes: undefined } as never)).scopes).toEqual(['posts:read', 'posts:write']);
  });

  it('raises ReauthorizationRequiredError on invalid_grant', async () => {
    endpoint.answerJson({ error: 'invalid_grant', error_description: 'refresh token revoked' }, 400);
    const error = await caught(makeClient().refresh(previous));
    expect(error).toBeInstanceOf(ReauthorizationRequiredError);
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({ reason: 'invalid_grant', error: 'invalid_grant', error_description: 'refresh token revoked', status: 400 });
  });

  it('reads an RFC 6749 §5.2 error body whatever its content type says, as it reads a token answer', async () => {
    // A server that labels its JSON text/plain (or not at all) still means invalid_grant: the user must sign in again.
    for (const headers of [{ 'content-type': 'text/plain;charset=UTF-8' }, {} as Record<string, string>]) {
      endpoint.onToken(() => new HttpResponse(JSON.stringify({ error: 'invalid_grant', error_description: 'refresh token revoked' }), { status: 400, headers }));
      const error = await caught(makeClient().refresh(previous));
      expect(error).toBeInstanceOf(ReauthorizationRequiredError);
      expect(error).toMatchObject({ error: 'invalid_grant', error_description: 'refresh token revoked', status: 400 });
    }
    endpoint.onToken(() => new HttpResponse(JSON.stringify({ error: 'invalid_client' }), { status: 401, headers: { 'content-type': 'text/plain' } }));
    expect(await caught(makeClient().refresh(previous))).toMatchObject({ name: 'OAuthError', error: 'invalid_client', status: 401 });
  });

  it('raises a plain OAuthError for other refresh errors', async () => {
    endpoint.answerJson({ error: 'invalid_client' }, 401);
    const error = await caught(makeClient().refresh(previous));
    expect(error).not.toBeInstanceOf(ReauthorizationRequiredError);
    expect(error).toMatchObject({ error: 'invalid_client' });
  });

  it('rejects a TokenSet without a refresh token before any request', async () => {
    const { refreshToken: _, ...noRefresh } = previous;
    const error = await caught(makeClient().refresh(noRefresh));
    expect(error.name).toBe('ValidationError');
    expect(endpoint.tokenRequests).toHaveLength(0);
  });
});

describe('secrets', () => {
  it('shows no client secret or token in any error thrown by these tests', () => {
    expectNoSecretsInCollectedErrors(3);
  });
});

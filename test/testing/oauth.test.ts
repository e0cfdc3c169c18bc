import { describe, expect, it } from 'vitest';
import {
  ALL_SCOPES, authorizeQuery, bearer, CLIENT, form, getCode, type Harness, login, MODES, pkce, REDIRECT_URI, refreshRequest, start,
} from './helpers.js';

async function exchange(h: Harness, fields: Record<string, string | undefined>) {
  const res = await h.call(
    '/oauth/token',
    form({ grant_type: 'authorization_code', client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret, redirect_uri: REDIRECT_URI, ...fields }),
  );
  return { res, body: (await res.json()) as Record<string, unknown> };
}

async function refresh(h: Harness, refreshToken: string, extra: Record<string, string> = {}) {
  const res = await refreshRequest(h, refreshToken, extra);
  return { res, body: (await res.json()) as Record<string, unknown> };
}

describe.each(MODES)('OAuth over %s', (mode) => {
  let h: Harness;
  const setup = async (options = {}) => {
    h = await start(mode, options);
    return h;
  };
  const teardown = () => h.close();

  it('completes the authorization-code flow with PKCE S256 and returns RFC 6749 §5.1 tokens', async () => {
    await setup();
    try {
      const { verifier, challenge } = pkce();
      const res = await h.call(authorizeQuery({}, challenge));
      expect(res.status).toBe(302);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      const location = new URL(res.headers.get('location') as string);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
      expect(location.searchParams.get('state')).toBe('state_abc');
      expect(location.searchParams.get('iss')).toBe(h.fake.baseUrl);
      const { res: tokenRes, body } = await exchange(h, { code: location.searchParams.get('code') as string, code_verifier: verifier });
      expect(tokenRes.status).toBe(200);
      expect(tokenRes.headers.get('cache-control')).toBe('no-store');
      expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: ALL_SCOPES.join(' ') });
      expect(typeof body.access_token).toBe('string');
      expect(typeof body.refresh_token).toBe('string');
      const accounts = await h.call('/accounts', bearer(body.access_token as string));
      expect(accounts.status).toBe(200);
      expect(h.fake.stats.tokenRequests.authorization_code).toBe(1);
    } finally {
      await teardown();
    }
  });

  it.each([
    ['unknown client_id', { client_id: 'nope' }, 'invalid_client'],
    ['missing client_id', { client_id: undefined }, 'invalid_client'],
    ['redirect_uri not registered', { redirect_uri: 'http://evil.example/cb' }, 'invalid_request'],
    ['redirect_uri differing by a trailing slash', { redirect_uri: `${REDIRECT_URI}/` }, 'invalid_request'],
    ['missing redirect_uri', { redirect_uri: undefined }, 'invalid_request'],
  ])('answers 400 without redirecting for %s', async (_name, overrides, error) => {
    await setup();
    try {
      const res = await h.call(authorizeQuery(overrides));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toMatchObject({ error });
    } finally {
      await teardown();
    }
  });

  it('names the redirect_uri sent and the ones registered when it refuses one', async () => {
    await setup();
    try {
      const res = await h.call(authorizeQuery({ redirect_uri: 'http://127.0.0.1:3001/callback' }));
      const { error_description } = (await res.json()) as { error_description: string };
      expect(error_description).toContain(`The URIs registered for this client are ${REDIRECT_URI}, and redirect_uri "http://127.0.0.1:3001/callback" is not exactly one of them.`);
      expect(error_description).toContain('postsched mock --redirect-uri <url>');
    } finally {
      await teardown();
    }
  });

  it.each([
    ['missing response_type', { response_type: undefined }, 'invalid_request'],
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['missing scope', { scope: undefined }, 'invalid_request'],
    ['an unknown scope', { scope: 'posts:read posts:admin' }, 'invalid_scope'],
    ['scopes joined by commas', { scope: 'posts:read,posts:write' }, 'invalid_scope'],
    ['missing code_challenge', { code_challenge: undefined }, 'invalid_request'],
    ['code_challenge_method=plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['missing code_challenge_method', { code_challenge_method: undefined }, 'invalid_request'],
    ['a malformed code_challenge', { code_challenge: 'short' }, 'invalid_request'],
  ])('redirects with error for %s (RFC 6749 §4.1.2.1)', async (_name, overrides, error) => {
    await setup();
    try {
      const res = await h.call(authorizeQuery(overrides));
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location') as string);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('error_description')).toBeTruthy();
      expect(location.searchParams.get('state')).toBe('state_abc');
      expect(location.searchParams.get('iss')).toBe(h.fake.baseUrl);
      expect(location.searchParams.get('code')).toBeNull();
    } finally {
      await teardown();
    }
  });

  it('redirects with invalid_request and no state when state is missing', async () => {
    await setup();
    try {
      const res = await h.call(authorizeQuery({ state: undefined }));
      const location = new URL(res.headers.get('location') as string);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.has('state')).toBe(false);
    } finally {
      await teardown();
    }
  });

  it('accepts scopes joined by + in the raw query (a space once decoded)', async () => {
    await setup();
    try {
      const raw = authorizeQuery({ scope: 'posts:read posts:write' });
      expect(raw).toContain('scope=posts%3Aread+posts%3Awrite');
      const res = await h.call(raw);
      expect(new URL(res.headers.get('location') as string).searchParams.get('code')).toMatch(/^code_/);
    } finally {
      await teardown();
    }
  });

  it('redirects with access_denied when consent is configured to deny', async () => {
    await setup({ consent: 'deny' });
    try {
      const res = await h.call(authorizeQuery());
      expect(new URL(res.headers.get('location') as string).searchParams.get('error')).toBe('access_denied');
    } finally {
      await teardown();
    }
  });

  it('refuses a replayed code and revokes the tokens issued from it (RFC 6749 §4.1.2)', async () => {
    await setup();
    try {
      const { code, verifier } = await getCode(h);
      const first = await exchange(h, { code, code_verifier: verifier });
      expect(first.res.status).toBe(200);
      const replay = await exchange(h, { code, code_verifier: verifier });
      expect(replay.res.status).toBe(400);
      expect(replay.body.error).toBe('invalid_grant');
      const accounts = await h.call('/accounts', bearer(first.body.access_token as string));
      expect(accounts.status).toBe(401);
      expect((await refresh(h, first.body.refresh_token as string)).body.error).toBe('invalid_grant');
    } finally {
      await teardown();
    }
  });

  it('refuses a wrong code_verifier with invalid_grant', async () => {
    await setup();
    try {
      const { code } = await getCode(h);
      const { res, body } = await exchange(h, { code, code_verifier: pkce().verifier });
      expect(res.status).toBe(400);
      expect(body).toMatchObject({ error: 'invalid_grant' });
      expect(String(body.error_description)).toContain('code_verifier');
    } finally {
      await teardown();
    }
  });

  it('refuses a code after 60 s on the fake clock', async () => {
    await setup();
    try {
      const { code, verifier } = await getCode(h);
      await h.fake.clock.advance(60_000);
      expect((await exchange(h, { code, code_verifier: verifier })).body.error).toBe('invalid_grant');
    } finally {
      await teardown();
    }
  });

  it.each([
    ['a wrong client_secret', { client_secret: 'wrong' }, 401, 'invalid_client'],
    ['an unknown client_id', { client_id: 'nope' }, 401, 'invalid_client'],
    ['a missing client_secret', { client_secret: undefined }, 401, 'invalid_client'],
    ['a missing code', { code: undefined }, 400, 'invalid_request'],
    ['a missing code_verifier', { code_verifier: undefined }, 400, 'invalid_request'],
    ['a too short code_verifier', { code_verifier: 'abc' }, 400, 'invalid_request'],
    ['a missing redirect_uri', { redirect_uri: undefined }, 400, 'invalid_request'],
    ['a different redirect_uri', { redirect_uri: 'http://localhost:3000/other' }, 400, 'invalid_grant'],
    ['an unknown code', { code: 'code_unknown' }, 400, 'invalid_grant'],
    ['grant_type=password', { grant_type: 'password' }, 400, 'unsupported_grant_type'],
    ['a missing grant_type', { grant_type: undefined }, 400, 'invalid_request'],
  ])('answers the token request with %s by an RFC 6749 §5.2 error', async (_name, overrides, status, error) => {
    await setup();
    try {
      const { code, verifier } = await getCode(h);
      const { res, body } = await exchange(h, { code, code_verifier: verifier, ...overrides });
      expect(res.status).toBe(status);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(body.error).toBe(error);
      expect(typeof body.error_description).toBe('string');
      expect(JSON.stringify(body)).not.toContain(CLIENT.clientSecret);
    } finally {
      await teardown();
    }
  });

  it('refuses a JSON token request and client credentials sent by HTTP Basic (spec 4.2 form fields)', async () => {
    await setup();
    try {
      const { code, verifier } = await getCode(h);
      const asJson = await h.call('/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'authorization_code', code, code_verifier: verifier }),
      });
      expect(asJson.status).toBe(400);
      expect(await asJson.json()).toMatchObject({ error: 'invalid_request' });
      const init = form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier });
      const basic = await h.call('/oauth/token', {
        ...init,
        headers: { ...(init.headers as Record<string, string>), authorization: `Basic ${btoa(`${CLIENT.clientId}:${CLIENT.clientSecret}`)}` },
      });
      expect(basic.status).toBe(401);
      expect(await basic.json()).toMatchObject({ error: 'invalid_client' });
    } finally {
      await teardown();
    }
  });

  it('rotates refresh tokens: the old refresh token is refused after use', async () => {
    await setup();
    try {
      const tokens = await login(h);
      const first = await refresh(h, tokens.refresh_token);
      expect(first.res.status).toBe(200);
      expect(first.body.refresh_token).not.toBe(tokens.refresh_token);
      expect(first.body.access_token).not.toBe(tokens.access_token);
      const reuse = await refresh(h, tokens.refresh_token);
      expect(reuse.res.status).toBe(400);
      expect(reuse.body.error).toBe('invalid_grant');
      expect((await refresh(h, first.body.refresh_token as string)).res.status).toBe(200);
      expect(h.fake.stats.tokenRequests.refresh_token).toBe(3);
    } finally {
      await teardown();
    }
  });

  it('revokes the whole grant on refresh-token reuse when configured to', async () => {
    await setup({ refreshTokenReuse: 'revoke-grant' });
    try {
      const tokens = await login(h);
      const rotated = await refresh(h, tokens.refresh_token);
      await refresh(h, tokens.refresh_token);
      expect((await refresh(h, rotated.body.refresh_token as string)).body.error).toBe('invalid_grant');
    } finally {
      await teardown();
    }
  });

  it('narrows scope on refresh but refuses widening it with invalid_scope', async () => {
    await setup();
    try {
      const tokens = await login(h, ['posts:read']);
      expect((await refresh(h, tokens.refresh_token, { scope: 'posts:write' })).body.error).toBe('invalid_scope');
      const narrowed = await login(h, ['posts:read', 'posts:write']);
      expect((await refresh(h, narrowed.refresh_token, { scope: 'posts:read' })).body.scope).toBe('posts:read');
    } finally {
      await teardown();
    }
  });

  it('expires access tokens after 3600 s on the fake clock, and a refreshed token works again', async () => {
    await setup();
    try {
      const tokens = await login(h);
      await h.fake.clock.advance(3_599_000);
      expect((await h.call('/accounts', bearer(tokens.access_token))).status).toBe(200);
      await h.fake.clock.advance(1_000);
      const expired = await h.call('/accounts', bearer(tokens.access_token));
      expect(expired.status).toBe(401);
      expect(expired.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expect(await expired.json()).toMatchObject({ error: { code: 'invalid_token' } });
      const renewed = await refresh(h, tokens.refresh_token);
      expect((await h.call('/accounts', bearer(renewed.body.access_token as string))).status).toBe(200);
    } finally {
      await teardown();
    }
  });
});

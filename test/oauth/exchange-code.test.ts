import { readFileSync } from 'node:fs';
import { HttpResponse, delay, http } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ConnectionError,
  OAuthCallbackError,
  OAuthClient,
  OAuthError,
  OAuthResponseError,
  ReauthorizationRequiredError,
  TimeoutError,
  ValidationError,
  type AuthorizationRequest,
} from '@postsched/sdk';
import {
  BASE_URL,
  CLIENT_ID,
  CLIENT_SECRET,
  MARK,
  REDIRECT_URI,
  caught,
  expectNoSecretsInCollectedErrors,
  extraSecrets,
  makeClient,
  tokenBody,
  useTokenEndpoint,
} from './helpers.js';

const endpoint = useTokenEndpoint();
const CODE = `code_${MARK}_1`;

afterEach(() => {
  vi.useRealTimers();
});

/** Starts an authorization and builds the callback the service would redirect to. */
async function start(oauth = makeClient()): Promise<{ oauth: OAuthClient; pending: AuthorizationRequest; callback: URL }> {
  const pending = await oauth.createAuthorizationUrl({ scopes: ['posts:read', 'posts:write'] });
  extraSecrets.add(pending.codeVerifier);
  const callback = new URL(REDIRECT_URI);
  callback.searchParams.set('code', CODE);
  callback.searchParams.set('state', pending.state);
  return { oauth, pending, callback };
}

describe('OAuthClient.exchangeCode: the callback checks', () => {
  it('rejects a callback whose state differs (CSRF guard) and sends no token request', async () => {
    endpoint.answerJson(tokenBody(1));
    const { oauth, pending, callback } = await start();
    callback.searchParams.set('state', 'forged-state');
    const error = await caught(oauth.exchangeCode(callback, pending));
    expect(error).toBeInstanceOf(OAuthCallbackError);
    expect((error as OAuthCallbackError).code).toBe('state_mismatch');
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('rejects a callback without state', async () => {
    const { oauth, pending, callback } = await start();
    callback.searchParams.delete('state');
    const error = await caught(oauth.exchangeCode(callback, pending));
    expect((error as OAuthCallbackError).code).toBe('missing_state');
  });

  it('turns error=access_denied into an OAuthError with error, error_description and error_uri', async () => {
    const { oauth, pending } = await start();
    const callback = new URL(REDIRECT_URI);
    callback.search = new URLSearchParams({
      error: 'access_denied',
      error_description: 'The user declined',
      error_uri: 'https://docs.postsched.test/errors#access_denied',
      state: pending.state,
    }).toString();
    const error = await caught(oauth.exchangeCode(callback, pending));
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).not.toBeInstanceOf(ReauthorizationRequiredError);
    expect(error).toMatchObject({
      name: 'OAuthError',
      error: 'access_denied',
      error_description: 'The user declined',
      error_uri: 'https://docs.postsched.test/errors#access_denied',
      status: undefined,
    });
    expect(error.message).toContain('access_denied');
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('checks state before reading an error redirect', async () => {
    const { oauth, pending } = await start();
    const error = await caught(oauth.exchangeCode(`${REDIRECT_URI}?error=access_denied&state=other`, pending));
    expect((error as OAuthCallbackError).code).toBe('state_mismatch');
  });

  it('rejects a callback whose iss names another authorization server (RFC 9207)', async () => {
    endpoint.answerJson(tokenBody(1));
    const { oauth, pending, callback } = await start();
    callback.searchParams.set('iss', 'https://evil.example');
    const error = await caught(oauth.exchangeCode(callback, pending));
    expect(error).toBeInstanceOf(OAuthCallbackError);
    expect((error as OAuthCallbackError).code).toBe('issuer_mismatch');
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('rejects a callback whose iss is present but empty: present, it must equal the issuer (RFC 9207 §2.4)', async () => {
    endpoint.answerJson(tokenBody(1));
    const { oauth, pending, callback } = await start();
    callback.searchParams.set('iss', '');
    const error = await caught(oauth.exchangeCode(callback, pending));
    expect((error as OAuthCallbackError).code).toBe('issuer_mismatch');
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('accepts an iss equal to the base URL, or to the issuer option', async () => {
    endpoint.answerJson(tokenBody(1));
    const first = await start();
    first.callback.searchParams.set('iss', BASE_URL);
    await expect(first.oauth.exchangeCode(first.callback, first.pending)).resolves.toMatchObject({ accessToken: `at_${MARK}_1` });

    const second = await start(makeClient({ issuer: 'https://auth.postsched.test' }));
    second.callback.searchParams.set('iss', 'https://auth.postsched.test');
    await expect(second.oauth.exchangeCode(second.callback, second.pending)).resolves.toMatchObject({ accessToken: `at_${MARK}_1` });
  });

  it('rejects a callback without code', async () => {
    const { oauth, pending, callback } = await start();
    callback.searchParams.delete('code');
    const error = await caught(oauth.exchangeCode(callback, pending));
    expect((error as OAuthCallbackError).code).toBe('missing_code');
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('rejects a callback that repeats state', async () => {
    const { oauth, pending, callback } = await start();
    callback.searchParams.append('state', pending.state);
    const error = await caught(oauth.exchangeCode(callback, pending));
    expect((error as OAuthCallbackError).code).toBe('invalid_callback');
  });

  it('rejects a callback that repeats iss, the first one empty, as invalid_callback naming iss, and sends nothing', async () => {
    const { oauth, pending, callback } = await start();
    callback.searchParams.append('iss', '');
    callback.searchParams.append('iss', BASE_URL);
    const error = await caught(oauth.exchangeCode(callback, pending));
    expect(error).toMatchObject({ name: 'OAuthCallbackError', code: 'invalid_callback' });
    expect(error.message).toMatch(/repeats `iss`/);
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('rejects a callback that repeats code as invalid_callback (not as one without a code), and sends nothing', async () => {
    const { oauth, pending, callback } = await start();
    callback.searchParams.append('code', 'code_other');
    const error = await caught(oauth.exchangeCode(callback, pending));
    expect(error).toMatchObject({ name: 'OAuthCallbackError', code: 'invalid_callback' });
    expect(error.message).toMatch(/repeats `code`/);
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('accepts the callback as a URL, a full URL string, a path with query, or URLSearchParams', async () => {
    endpoint.answerJson(tokenBody(1));
    const { oauth, pending, callback } = await start();
    for (const form of [callback, callback.href, `/callback${callback.search}`, callback.search, callback.searchParams]) {
      await expect(oauth.exchangeCode(form, pending)).resolves.toMatchObject({ accessToken: `at_${MARK}_1` });
    }
    expect(endpoint.tokenRequests).toHaveLength(5);
  });
});

describe('OAuthClient.exchangeCode: the token request', () => {
  it('posts grant_type, client_id, client_secret, code, redirect_uri and code_verifier as form fields', async () => {
    let contentType: string | null = null;
    let authorization: string | null = 'unset';
    endpoint.onToken(({ request }) => {
      contentType = request.headers.get('content-type');
      authorization = request.headers.get('authorization');
      return HttpResponse.json(tokenBody(1));
    });
    const { oauth, pending, callback } = await start();
    await oauth.exchangeCode(callback, pending);

    expect(contentType).toMatch(/^application\/x-www-form-urlencoded/);
    expect(authorization).toBeNull(); // spec 4.2: credentials go in the body, not in Basic auth
    const form = endpoint.tokenRequests[0]!;
    expect(Object.fromEntries(form)).toEqual({
      grant_type: 'authorization_code',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      code: CODE,
      redirect_uri: REDIRECT_URI,
      code_verifier: pending.codeVerifier,
    });
  });

  it("says the SDK's User-Agent on token requests, as on every other request (README, Observability)", async () => {
    const agents: Array<string | null> = [];
    endpoint.onToken(({ request }) => {
      agents.push(request.headers.get('user-agent'));
      return HttpResponse.json(tokenBody(1));
    });
    const { oauth, pending, callback } = await start();
    await oauth.exchangeCode(callback, pending);
    await oauth.refresh(`rt_${MARK}_1`);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(agents).toEqual(Array(2).fill(`postsched-sdk/${version} node/${process.versions.node}`));
  });

  it('refuses checks.scopes that are not a list of names before the code is sent (a code is used once)', async () => {
    const { oauth, pending, callback } = await start();
    endpoint.answerJson(tokenBody(1));
    for (const scopes of ['posts:read', 42, [1]]) {
      expect(await caught(oauth.exchangeCode(callback, { ...pending, scopes } as never))).toBeInstanceOf(ValidationError);
    }
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('refuses lost checks (req.session.oauth undefined: a lost session) naming the likely causes, before the code is sent', async () => {
    const { oauth, callback } = await start();
    endpoint.answerJson(tokenBody(1));
    const error = await caught(oauth.exchangeCode(callback, undefined as never));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/got undefined\. Often the session that saved them was lost: its cookie was not sent back/);
    expect((error as Error).message).toContain('another host or port than the one that started the flow');
    expect(endpoint.tokenRequests).toHaveLength(0);
  });

  it('returns a normalized TokenSet whose expiry counts from when the request left', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const sentAt = Date.UTC(2030, 0, 1);
    vi.setSystemTime(sentAt);
    endpoint.onToken(() => {
      vi.setSystemTime(sentAt + 10_000); // a slow answer must not extend the token's life
      return HttpResponse.json(tokenBody(1, { expires_in: 1800 }));
    });
    const { oauth, pending, callback } = await start();
    const tokens = await oauth.exchangeCode(callback, pending);
    expect(tokens).toStrictEqual({
      accessToken: `at_${MARK}_1`,
      refreshToken: `rt_${MARK}_1`,
      expiresAt: sentAt + 1_800_000,
      scopes: ['posts:read', 'posts:write'],
      tokenType: 'bearer',
    });
  });

  it('counts 3600 s when expires_in is absent (spec 5.3)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2030, 0, 1));
    const { expires_in: _, ...body } = tokenBody(1);
    endpoint.answerJson(body);
    const { oauth, pending, callback } = await start();
    expect((await oauth.exchangeCode(callback, pending)).expiresAt).toBe(Date.UTC(2030, 0, 1) + 3_600_000);
  });

  it('leaves refreshToken out when the answer has no refresh_token', async () => {
    const { refresh_token: _, ...body } = tokenBody(1);
    endpoint.answerJson(body);
    const { oauth, pending, callback } = await start();
    const tokens = await oauth.exchangeCode(callback, pending);
    expect('refreshToken' in tokens).toBe(false);
  });

  it('uses the scopes asked for when the answer has no scope', async () => {
    const { scope: _, ...body } = tokenBody(1);
    endpoint.answerJson(body);
    const { oauth, pending, callback } = await start();
    expect((await oauth.exchangeCode(callback, pending)).scopes).toEqual(['posts:read', 'posts:write']);
  });

  it('uses the granted scope when the service narrows it', async () => {
    endpoint.answerJson(tokenBody(1, { scope: 'posts:read' }));
    const { oauth, pending, callback } = await start();
    expect((await oauth.exchangeCode(callback, pending)).scopes).toEqual(['posts:read']);
  });

  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('accepts token_type %s as bearer', async (tokenType) => {
    endpoint.answerJson(tokenBody(1, { token_type: tokenType }));
    const { oauth, pending, callback } = await start();
    expect((await oauth.exchangeCode(callback, pending)).tokenType).toBe('bearer');
  });

  it('ignores extra fields in the answer and returns the same TokenSet shape', async () => {
    endpoint.answerJson(tokenBody(1, { user_id: 'u_1', plan: { tier: 'pro' }, expires_in: '3600' }));
    const { oauth, pending, callback } = await start();
    const tokens = await oauth.exchangeCode(callback, pending);
    expect(Object.keys(tokens).sort()).toEqual(['accessToken', 'expiresAt', 'refreshToken', 'scopes', 'tokenType']);
  });

  it('ignores an id_token in the answer: the SDK is no OpenID client, and a field it does not use never costs the tokens', async () => {
    for (const idToken of ['not-a-jwt', 'eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJodHRwczovL2Vsc2V3aGVyZSJ9.c2ln']) {
      endpoint.answerJson(tokenBody(1, { id_token: idToken }));
      const { oauth, pending, callback } = await start();
      await expect(oauth.exchangeCode(callback, pending)).resolves.toMatchObject({ accessToken: `at_${MARK}_1`, refreshToken: `rt_${MARK}_1` });
    }
  });

  it.each([
    ['-5', 0],
    ['"-5"', 0],
    ['1e308', 365 * 24 * 3600],
    ['1e400', 365 * 24 * 3600],
    ['"1e400"', 365 * 24 * 3600],
    ['null', 3600],
  ])('reads expires_in %s as %s s (clamped to 0 to a year; null as absent) rather than refusing the tokens', async (expiresIn, seconds) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2030, 0, 1));
    endpoint.onToken(() => new HttpResponse(JSON.stringify(tokenBody(1)).replace('"expires_in":3600', `"expires_in":${expiresIn}`), { headers: { 'content-type': 'application/json' } }));
    const { oauth, pending, callback } = await start();
    expect((await oauth.exchangeCode(callback, pending)).expiresAt).toBe(Date.UTC(2030, 0, 1) + seconds * 1000);
  });

  it('returns a TokenSet that survives JSON.stringify and JSON.parse unchanged', async () => {
    endpoint.answerJson(tokenBody(1));
    const { oauth, pending, callback } = await start();
    const tokens = await oauth.exchangeCode(callback, pending);
    expect(JSON.parse(JSON.stringify(tokens))).toStrictEqual(tokens);
  });

  it('rejects a token type other than bearer', async () => {
    endpoint.answerJson(tokenBody(1, { token_type: 'DPoP' }));
    const { oauth, pending, callback } = await start();
    const error = await caught(oauth.exchangeCode(callback, pending));
    expect(error).toBeInstanceOf(OAuthResponseError);
    expect((error as OAuthResponseError).code).toBe('unsupported_token_type');
  });
});

describe('OAuthClient: token endpoint failures', () => {
  async function exchangeError(): Promise<Error> {
    const { oauth, pending, callback } = await start();
    return caught(oauth.exchangeCode(callback, pending));
  }

  it('turns an RFC 6749 §5.2 error body into an OAuthError with its fields and the status', async () => {
    endpoint.answerJson({ error: 'invalid_grant', error_description: 'code expired', error_uri: 'https://docs.example/e' }, 400);
    const error = await exchangeError();
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).not.toBeInstanceOf(ReauthorizationRequiredError); // on a code exchange it is not about refresh
    expect(error).toMatchObject({ error: 'invalid_grant', error_description: 'code expired', error_uri: 'https://docs.example/e', status: 400 });
  });

  it('turns a 401 invalid_client into an OAuthError, with or without WWW-Authenticate', async () => {
    endpoint.answerJson({ error: 'invalid_client', error_description: 'bad secret' }, 401);
    expect(await exchangeError()).toMatchObject({ name: 'OAuthError', error: 'invalid_client', status: 401 });

    endpoint.onToken(() =>
      HttpResponse.json({ error: 'invalid_client', error_description: 'bad secret' }, { status: 401, headers: { 'www-authenticate': 'Basic realm="oauth"' } }),
    );
    expect(await exchangeError()).toMatchObject({ name: 'OAuthError', error: 'invalid_client', error_description: 'bad secret', status: 401 });
  });

  it('turns an HTML 500 page into an OAuthResponseError with the status and without the body', async () => {
    endpoint.onToken(() => HttpResponse.html(`<html><body>Internal error ${MARK}</body></html>`, { status: 500 }));
    const error = await exchangeError();
    expect(error).toBeInstanceOf(OAuthResponseError);
    expect(error).toMatchObject({ code: 'unexpected_status', status: 500 });
  });

  it.each([
    ['an HTML body with status 200', () => HttpResponse.html(`<p>${MARK}</p>`)],
    ['a JSON content type with a broken body', () => new HttpResponse(`{"access_token":"at_${MARK}"`, { headers: { 'content-type': 'application/json' } })],
    ['a plain-text 400', () => HttpResponse.text(`bad ${MARK}`, { status: 400 })],
  ])('turns %s into a not_json OAuthResponseError', async (_name, answer) => {
    endpoint.onToken(answer);
    const error = await exchangeError();
    expect(error).toBeInstanceOf(OAuthResponseError);
    expect((error as OAuthResponseError).code).toBe('not_json');
  });

  it('turns JSON without access_token into an invalid_body OAuthResponseError naming the field', async () => {
    endpoint.answerJson({ token_type: 'Bearer', refresh_token: `rt_${MARK}_x` });
    const error = await exchangeError();
    expect(error).toMatchObject({ code: 'invalid_body', status: 200 });
    expect(error.message).toContain('access_token');
  });

  it('turns a network failure into a ConnectionError', async () => {
    endpoint.onToken(() => HttpResponse.error());
    const error = await exchangeError();
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toContain(`${BASE_URL}/oauth/token`);
  });

  it('turns a token endpoint that never answers into a TimeoutError after timeoutMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    endpoint.onToken(async () => {
      await delay('infinite');
      return HttpResponse.json(tokenBody(1));
    });
    const { oauth, pending, callback } = await start(makeClient({ timeoutMs: 5_000 }));
    const result = caught(oauth.exchangeCode(callback, pending));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(endpoint.tokenRequests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    const error = await result;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(5_000);
  });

  it('ends in a TimeoutError after timeoutMs with a fetch that ignores the abort signal, whether it never answers or never ends the body', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stalls = [
      () => new Promise<Response>(() => {}),
      async () => new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('{')) }), { status: 200 }),
    ];
    for (const stall of stalls) {
      const { oauth, pending, callback } = await start(makeClient({ timeoutMs: 5_000, fetch: stall }));
      const result = caught(oauth.exchangeCode(callback, pending));
      await vi.advanceTimersByTimeAsync(5_000);
      const error = await Promise.race([result, Promise.resolve('still waiting')]);
      expect(error).toBeInstanceOf(TimeoutError);
      expect(vi.getTimerCount()).toBe(0);
    }
  });

  it('uses the fetch given in the options, and clears its timer after a success', async () => {
    const calls: string[] = [];
    const oauth = makeClient({
      fetch: async (url, init) => {
        calls.push(url);
        expect(init.signal).toBeInstanceOf(AbortSignal);
        return Response.json(tokenBody(7));
      },
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { pending, callback } = await start(oauth);
    await expect(oauth.exchangeCode(callback, pending)).resolves.toMatchObject({ accessToken: `at_${MARK}_7` });
    expect(calls).toEqual([`${BASE_URL}/oauth/token`]);
    expect(endpoint.tokenRequests).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('talks plain http to a loopback base URL', async () => {
    endpoint.server.use(http.post('http://127.0.0.1:8787/oauth/token', () => HttpResponse.json(tokenBody(2))));
    const { oauth, pending, callback } = await start(makeClient({ baseUrl: 'http://127.0.0.1:8787' }));
    await expect(oauth.exchangeCode(callback, pending)).resolves.toMatchObject({ accessToken: `at_${MARK}_2` });
  });
});

describe('secrets', () => {
  it('shows no client secret, code, verifier or token in any error thrown by these tests', () => {
    expectNoSecretsInCollectedErrors(18);
  });
});

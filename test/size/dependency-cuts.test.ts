/**
 * The build bundles ky and oauth4webapi without code the SDK never reaches (scripts/dependency-cuts.mjs): here each
 * dependency bundled with and without its cut, run as the SDK runs it.
 */
import { build, type Plugin } from 'esbuild';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { withoutIdTokenCheck, withoutKyProgress, withoutKyUnusedOptions, withoutOauthUnusedOptions } from '../../scripts/dependency-cuts.mjs';

async function bundle(contents: string, plugins: Plugin[]): Promise<string> {
  const result = await build({ stdin: { contents, resolveDir: process.cwd() }, bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent', plugins });
  return result.outputFiles[0]!.text;
}

const load = async <T>(code: string): Promise<T> => import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
const saved = (whole: string, cut: string) => gzipSync(whole).length - gzipSync(cut).length;

describe('oauth4webapi as the build bundles it', () => {
  const OAUTH = "export { processGenericTokenEndpointResponse, OperationProcessingError } from 'oauth4webapi';";
  const as = { issuer: 'https://api.example.com', token_endpoint: 'https://api.example.com/oauth/token' };
  const answer = (body: object) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

  it('leaves out the JWT checks of an id_token (over 1 KB gz)', async () => {
    const [whole, cut] = await Promise.all([bundle(OAUTH, []), bundle(OAUTH, [withoutIdTokenCheck])]);
    expect(whole).toContain('"aud" (audience)');
    expect(cut).not.toContain('"aud" (audience)');
    expect(saved(whole, cut)).toBeGreaterThan(1024);
  });

  it('reads a token answer as before, and refuses one with an id_token instead of checking it', async () => {
    const oauth = await load<typeof import('oauth4webapi')>(await bundle(OAUTH, [withoutIdTokenCheck]));
    const json = await oauth.processGenericTokenEndpointResponse(as, { client_id: 'app' }, answer({ access_token: 'at', token_type: 'Bearer', expires_in: '60' }));
    expect(json).toEqual({ access_token: 'at', token_type: 'bearer', expires_in: 60 });
    const refused = oauth.processGenericTokenEndpointResponse(as, { client_id: 'app' }, answer({ access_token: 'at', token_type: 'bearer', id_token: 'x.y.z' }));
    await expect(refused).rejects.toBeInstanceOf(oauth.OperationProcessingError);
    await expect(refused).rejects.toThrow('"id_token" is not read');
  });

  // What src/oauth/oauth-client.ts calls.
  const CLIENT =
    'export { ClientSecretPost, OperationProcessingError, allowInsecureRequests, authorizationCodeGrantRequest, calculatePKCECodeChallenge, customFetch, ' +
    "generateRandomCodeVerifier, generateRandomState, processGenericTokenEndpointResponse, refreshTokenGrantRequest, skipStateCheck, validateAuthResponse } from 'oauth4webapi';";

  it('leaves out what only the options the SDK never passes reach (over 0.15 KB gz)', async () => {
    const [whole, cut] = await Promise.all([bundle(CLIENT, [withoutIdTokenCheck]), bundle(CLIENT, [withoutOauthUnusedOptions])]);
    // base64url decoding, the signal option, the mTLS aliases, the "no state expected" check, several content types.
    for (const text of ['not correctly encoded', '"options.signal" must', 'as.mtls_endpoint_aliases.', 'response parameter encountered', ', or ${']) {
      expect(whole).toContain(text);
      expect(cut).not.toContain(text);
    }
    expect(cut).toContain('"base64url decoding"'); // its refusal
    expect(saved(whole, cut)).toBeGreaterThan(150);
  });

  /** oauth4webapi bundled as the build bundles it, and a customFetch that records each token request. */
  async function sdkOauth(plugins: Plugin[] = [withoutOauthUnusedOptions]) {
    const oauth = await load<typeof import('oauth4webapi')>(await bundle(CLIENT, plugins));
    const sent: Array<{ url: string; method: string; headers: Record<string, string>; body: string; redirect: unknown; signal: unknown }> = [];
    const options = {
      [oauth.customFetch]: async (url: string, init: RequestInit) => {
        sent.push({ url, method: String(init.method), headers: init.headers as Record<string, string>, body: String(init.body), redirect: init.redirect, signal: init.signal });
        return answer({ access_token: 'at', token_type: 'bearer', expires_in: 60, refresh_token: 'rt2', scope: 'posts:read' });
      },
      [oauth.allowInsecureRequests]: false,
      headers: { 'user-agent': 'postsched-sdk/0' },
    };
    return { oauth, sent, options, client: { client_id: 'app' }, auth: oauth.ClientSecretPost('s3cret') };
  }

  const VERIFIER = 'a-verifier-of-43-characters-as-RFC-7636-says';

  it('sends and reads token requests as before: the same request, answer and PKCE challenge as oauth4webapi uncut', async () => {
    const outcomes = [];
    for (const plugins of [[], [withoutOauthUnusedOptions]]) {
      const { oauth, sent, options, client, auth } = await sdkOauth(plugins);
      const refreshed = await oauth.processGenericTokenEndpointResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, 'rt1', options));
      const callback = oauth.validateAuthResponse(as, client, new URLSearchParams({ code: 'c1', state: 'st', iss: as.issuer }), 'st');
      await oauth.authorizationCodeGrantRequest(as, client, auth, callback, 'https://app.example/cb', 'verifier-verifier-verifier-verifier-verif', options);
      const challenge = await oauth.calculatePKCECodeChallenge(VERIFIER);
      outcomes.push({ refreshed, sent, challenge, random: [oauth.generateRandomState().length, oauth.generateRandomCodeVerifier().length] });
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[1]!.sent[0]).toMatchObject({ url: as.token_endpoint, method: 'POST', redirect: 'manual', signal: undefined, body: 'refresh_token=rt1&grant_type=refresh_token&client_id=app&client_secret=s3cret' });
    expect(outcomes[1]!.challenge).toBe(createHash('sha256').update(VERIFIER).digest('base64url')); // RFC 7636 §4.2, S256
  });

  it('checks the state as before: a missing or other state refused, with the same errors', async () => {
    const { oauth, client } = await sdkOauth();
    const check = (state: string | undefined) => () => oauth.validateAuthResponse(as, client, new URLSearchParams(state === undefined ? { code: 'c' } : { code: 'c', state }), 'st');
    expect(check(undefined)).toThrow('response parameter "state" missing');
    expect(check('other')).toThrow('unexpected "state" response parameter value');
    expect(check(undefined)).toThrow(oauth.OperationProcessingError);
  });

  it('refuses, loudly, each option it no longer serves', async () => {
    const { oauth, options, client, auth } = await sdkOauth();
    await expect(oauth.refreshTokenGrantRequest(as, client, auth, 'rt', { ...options, signal: new AbortController().signal })).rejects.toThrow(/without options\.signal/);
    await expect(oauth.refreshTokenGrantRequest(as, client, auth, 'rt', { ...options, DPoP: {} as never })).rejects.toThrow(/without DPoP/);
    await expect(oauth.refreshTokenGrantRequest(as, { ...client, use_mtls_endpoint_aliases: true }, auth, 'rt', options)).rejects.toThrow(/without mtls_endpoint_aliases/);
    // No state expected, or its check skipped: oauth4webapi's own check of the expected state refuses them.
    expect(() => oauth.validateAuthResponse(as, client, new URLSearchParams({ code: 'c' }), oauth.skipStateCheck)).toThrow('"expectedState" argument must be a string');
  });
});

describe('ky as the build bundles it', () => {
  const KY = "export { default as ky } from 'ky';";

  it('leaves out the progress streams (over 0.3 KB gz)', async () => {
    const [whole, cut] = await Promise.all([bundle(KY, []), bundle(KY, [withoutKyProgress])]);
    for (const text of ['transferredBytes', 'WebKitFormBoundary']) {
      expect(whole).toContain(text);
      expect(cut).not.toContain(text);
    }
    expect(saved(whole, cut)).toBeGreaterThan(300);
  });

  it('sends as the SDK sends (its own options, a body), and fails loudly on the progress options it never passes', async () => {
    const { ky } = await load<{ ky: typeof import('ky').default }>(await bundle(KY, [withoutKyProgress]));
    const seen: string[] = [];
    const fetch = async (request: Request | URL | string) => {
      if (!(request instanceof Request)) throw new TypeError('ky passes a Request');
      seen.push(`${request.method} ${request.url} ${await request.text()}`);
      return new Response('{"ok":true}', { status: 503 });
    };
    const options: import('ky').Options = { timeout: 1000, retry: 0, throwHttpErrors: false, redirect: 'manual', fetch };
    const response = await ky('http://127.0.0.1:1/posts', { ...options, method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    expect([response.status, await response.text()]).toEqual([503, '{"ok":true}']);
    expect(seen).toEqual(['POST http://127.0.0.1:1/posts {"a":1}']);
    // Thrown or rejected, as ky reaches each (the upload's in its constructor).
    const failure = (send: () => unknown) => (async () => send())();
    await expect(failure(() => ky('http://127.0.0.1:1/posts', { ...options, onDownloadProgress: () => {} }))).rejects.toThrow(/without onDownloadProgress/);
    await expect(failure(() => ky.post('http://127.0.0.1:1/posts', { ...options, body: 'x', onUploadProgress: () => {} }))).rejects.toThrow(/without onDownloadProgress/);
  });

  const SDK_CUTS = [withoutKyProgress, withoutKyUnusedOptions];

  it('leaves out what only the options the SDK never passes reach (over 1.5 KB gz)', async () => {
    const [whole, cut] = await Promise.all([bundle(KY, [withoutKyProgress]), bundle(KY, SDK_CUTS)]);
    // The retries (NonError), HTTPError, merged searchParams, the retry options' defaults, the merge of defaults.
    for (const text of ['Non-error value was thrown', 'Request failed with', 'Array search parameters', 'retry.methods must be an array', 'argument must be an object']) {
      expect(whole).toContain(text);
      expect(cut).not.toContain(text);
    }
    expect(saved(whole, cut)).toBeGreaterThan(1536);
  });

  /** ky called as src/http/request.ts calls it: a string URL, its own options, `fetch` counting what it is given. */
  async function sdkKy() {
    // As src/http/ky.ts takes them: from one bundle (ky's `isTimeoutError` checks its own TimeoutError class).
    const { ky, isTimeoutError } = await load<{ ky: typeof import('ky').default; isTimeoutError: typeof import('ky').isTimeoutError }>(
      await bundle("export { default as ky, isTimeoutError } from 'ky';", SDK_CUTS),
    );
    const seen: Array<{ method: string; url: string; headers: Record<string, string>; body: string; init: unknown; redirect: string }> = [];
    const fetch = async (request: Request | URL | string, init?: RequestInit) => {
      if (!(request instanceof Request)) throw new TypeError('ky passes a Request');
      seen.push({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers), body: await request.text(), init, redirect: request.redirect });
      return new Response('{"ok":true}', { status: 503 });
    };
    const options = (more: import('ky').Options = {}): import('ky').Options => ({ timeout: 1000, retry: 0, throwHttpErrors: false, redirect: 'manual', fetch, ...more });
    return { ky, isTimeoutError, seen, options };
  }

  it('sends as the SDK sends: one attempt, the method, headers and body given, every status answered, nothing thrown for one', async () => {
    const { ky, seen, options } = await sdkKy();
    const response = await ky('http://127.0.0.1:1/posts?limit=2', options({ method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json', authorization: 'Bearer t' } }));
    expect([response.status, await response.text()]).toEqual([503, '{"ok":true}']);
    expect(seen).toEqual([
      { method: 'POST', url: 'http://127.0.0.1:1/posts?limit=2', headers: { 'content-type': 'application/json', authorization: 'Bearer t' }, body: '{"a":1}', init: {}, redirect: 'manual' },
    ]);
    const get = await ky('http://127.0.0.1:1/posts/p_1', options({ headers: { accept: 'application/json' } }));
    expect(get.status).toBe(503);
    expect(seen[1]).toMatchObject({ method: 'GET', url: 'http://127.0.0.1:1/posts/p_1', headers: { accept: 'application/json' }, body: '' });
  });

  it('fetches within the call, with the Request it built: no tick first, no copy of it kept for a retry', async () => {
    const { ky, options } = await sdkKy();
    const clone = vi.spyOn(Request.prototype, 'clone');
    try {
      const sent: Request[] = [];
      const fetch = async (request: Request | URL | string) => {
        sent.push(request as Request);
        return new Response(`got ${await (request as Request).text()}`, { status: 201 });
      };
      const pending = ky('http://127.0.0.1:1/posts', options({ method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' }, fetch }));
      expect(sent).toHaveLength(1);
      const response = await pending;
      expect([response.status, await response.text()]).toEqual([201, 'got {"a":1}']);
      expect(clone).not.toHaveBeenCalled();
    } finally {
      clone.mockRestore();
    }
  });

  it('with `retry: 0`, sends once and rejects with what fetch threw, an Error or not', async () => {
    const { ky } = await load<{ ky: typeof import('ky').default }>(await bundle(KY, SDK_CUTS));
    for (const thrown of [new TypeError('fetch failed'), 'a string']) {
      let calls = 0;
      const fetch = async () => {
        calls++;
        throw thrown;
      };
      await expect(ky('http://127.0.0.1:1/posts', { timeout: 1000, retry: 0, throwHttpErrors: false, fetch })).rejects.toBe(thrown);
      expect(calls).toBe(1);
    }
  });

  it("keeps its time-out (ky's TimeoutError, the fetch's signal aborted) and the caller's signal", async () => {
    const { ky, isTimeoutError, options } = await sdkKy();
    let signal: AbortSignal | undefined;
    const slow = ky('http://127.0.0.1:1/posts', options({ timeout: 20, fetch: async (request: Request | URL | string) => ((signal = (request as Request).signal), new Promise<Response>(() => {})) }));
    const error = await slow.catch((caught: unknown) => caught);
    expect(isTimeoutError(error)).toBe(true);
    expect(signal?.aborted).toBe(true);
    const caller = new AbortController();
    const untilAborted = async (request: Request | URL | string) => {
      const { signal } = request as Request;
      signal.throwIfAborted();
      return new Promise<Response>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    };
    const aborted = ky('http://127.0.0.1:1/posts', options({ signal: caller.signal, fetch: untilAborted }));
    caller.abort(new Error('the caller gave up'));
    await expect(aborted).rejects.toThrow('the caller gave up');
  });

  it('refuses at once, by name, every option it no longer serves, and has no methods but the call', async () => {
    const { ky, options } = await sdkKy();
    const failure = (send: () => unknown) => (async () => send())();
    const url = 'http://127.0.0.1:1/posts';
    const refused: Array<[import('ky').Options, RegExp]> = [
      [{ hooks: { beforeRequest: [] } }, /without hooks/],
      [{ context: { a: 1 } }, /without context/],
      [{ prefixUrl: 'http://127.0.0.1:1' }, /without prefixUrl/],
      [{ searchParams: { a: 1 } }, /without searchParams/],
      [{ json: { a: 1 } }, /without json/],
      [{ parseJson: JSON.parse }, /without parseJson/],
      [{ stringifyJson: JSON.stringify }, /without stringifyJson/],
      [{ onDownloadProgress: () => {} }, /without onDownloadProgress/],
      [{ onUploadProgress: () => {} }, /without onUploadProgress/],
      // Options of a fetch alone (undici's, Next.js's): ky would pass them on in fetch's init, which it no longer builds.
      [{ dispatcher: {} } as import('ky').Options, /without dispatcher/],
      [{ next: { revalidate: 1 } } as import('ky').Options, /without next/],
      [{ retry: 2 }, /without retries/],
      [{ throwHttpErrors: true }, /without retries, HTTPError/],
    ];
    for (const [more, message] of refused) await expect(failure(() => ky(url, options(more)))).rejects.toThrow(message);
    await expect(failure(() => ky(new Request(url), options()))).rejects.toThrow(/a Request input/);
    expect([typeof (ky as unknown as Record<string, unknown>)['get'], typeof ky.create, typeof ky.extend]).toEqual(['undefined', 'undefined', 'undefined']);
  });
});

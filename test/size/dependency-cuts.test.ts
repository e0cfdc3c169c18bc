/**
 * The build bundles ky and oauth4webapi without code the SDK never reaches (scripts/dependency-cuts.mjs): here each
 * dependency bundled with and without its cut, run as the SDK runs it.
 */
import { build, type Plugin } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { withoutIdTokenCheck, withoutKyProgress, withoutKyRetry } from '../../scripts/dependency-cuts.mjs';

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
});

describe('ky as the build bundles it', () => {
  const KY = "export { default as ky } from 'ky';";

  it('leaves out the progress streams (over 0.3 KB gz)', async () => {
    const [whole, cut] = await Promise.all([bundle(KY, []), bundle(KY, [withoutKyProgress])]);
    expect(whole).toContain('transferredBytes');
    expect(cut).not.toContain('transferredBytes');
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

  it('leaves out the parts of its retry that `retry: 0` never reaches (over 0.1 KB gz)', async () => {
    const [whole, cut] = await Promise.all([bundle(KY, [withoutKyProgress]), bundle(KY, [withoutKyProgress, withoutKyRetry])]);
    expect(whole).toContain('Non-error value was thrown');
    expect(cut).not.toContain('Non-error value was thrown');
    expect(saved(whole, cut)).toBeGreaterThan(100);
  });

  it('with `retry: 0`, sends once and rejects with what fetch threw, an Error or not', async () => {
    const { ky } = await load<{ ky: typeof import('ky').default }>(await bundle(KY, [withoutKyProgress, withoutKyRetry]));
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
});

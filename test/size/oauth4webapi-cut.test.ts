/**
 * The build bundles oauth4webapi without the OpenID id_token check the SDK never reaches (scripts/oauth4webapi-cut.mjs):
 * here oauth4webapi's token processor bundled with and without the cut, run on token answers.
 */
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { withoutIdTokenCheck } from '../../scripts/oauth4webapi-cut.mjs';

async function bundle(cut: boolean): Promise<string> {
  const result = await build({
    stdin: { contents: "export { processGenericTokenEndpointResponse, OperationProcessingError } from 'oauth4webapi';", resolveDir: process.cwd() },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
    plugins: cut ? [withoutIdTokenCheck] : [],
  });
  return result.outputFiles[0]!.text;
}

type Processor = typeof import('oauth4webapi');
const load = async (code: string): Promise<Processor> => import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);

const as = { issuer: 'https://api.example.com', token_endpoint: 'https://api.example.com/oauth/token' };
const answer = (body: object) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

describe('oauth4webapi as the build bundles it', () => {
  it('leaves out the JWT checks of an id_token (over 1 KB gz)', async () => {
    const [whole, cut] = await Promise.all([bundle(false), bundle(true)]);
    expect(whole).toContain('"aud" (audience)');
    expect(cut).not.toContain('"aud" (audience)');
    expect(gzipSync(whole).length - gzipSync(cut).length).toBeGreaterThan(1024);
  });

  it('reads a token answer as before, and refuses one with an id_token instead of checking it', async () => {
    const oauth = await load(await bundle(true));
    const json = await oauth.processGenericTokenEndpointResponse(as, { client_id: 'app' }, answer({ access_token: 'at', token_type: 'Bearer', expires_in: '60' }));
    expect(json).toEqual({ access_token: 'at', token_type: 'bearer', expires_in: 60 });
    const refused = oauth.processGenericTokenEndpointResponse(as, { client_id: 'app' }, answer({ access_token: 'at', token_type: 'bearer', id_token: 'x.y.z' }));
    await expect(refused).rejects.toBeInstanceOf(oauth.OperationProcessingError);
    await expect(refused).rejects.toThrow('"id_token" is not read');
  });
});

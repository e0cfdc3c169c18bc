// Code of the bundled dependencies that the SDK never reaches, cut from the build (tsup.config.ts `esbuildPlugins`):
// a bundler cannot tree-shake a branch inside a function, or a method of a class, so without these cuts every user
// ships it. Each cut names why the code is unreachable, leaves a loud failure in its place should it ever be reached,
// and fails the build when a new version of the dependency no longer matches it (test/size/dependency-cuts.test.ts).
import { readFile } from 'node:fs/promises';

/**
 * oauth4webapi without its OpenID `id_token` check. Every token answer reaches oauth4webapi through
 * src/oauth/normalize.ts's `forProcessing`, which drops `id_token` (the SDK is no OpenID client: RFC 6749 §5.1, ignore
 * what you do not use), so the branch of `processGenericAccessTokenResponse` that validates one as a JWT, with the
 * claim checks behind it, is never taken: ~1.4 KB gz of every bundle with OAuthClient. A refusal stays in its place.
 */
export const withoutIdTokenCheck = {
  name: 'oauth4webapi-without-id-token-check',
  setup(build) {
    // The branch, each of its lines indented deeper than its `if`, right before the token_type check.
    const branch = /\n {4}if \(json\.id_token !== undefined\) \{\n(?: {5}.*\n)+ {4}\}\n(?= {4}if \(recognizedTokenTypes)/;
    const refusal = `\n    if (json.id_token !== undefined) throw OPE('"response" body "id_token" is not read', INVALID_RESPONSE);\n`;
    build.onLoad({ filter: /[\\/]oauth4webapi[\\/]build[\\/]index\.js$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      if (!branch.test(source)) {
        throw new Error(`${path}: the id_token branch to cut was not found (scripts/dependency-cuts.mjs): update the cut for this oauth4webapi`);
      }
      return { contents: source.replace(branch, refusal), loader: 'js' };
    });
  },
};

/**
 * ky without its progress streams (`onDownloadProgress`, `onUploadProgress`: utils/body.js). The SDK's ky is its
 * private import `#ky`, called only by src/http/request.ts with options it builds itself, never these two (an upload's
 * `onProgress` is counted by the SDK, src/http/multipart.ts): ~0.4 KB gz of every bundle with PostSched. The module
 * becomes two functions that throw; a ky that imports anything else from it fails the build (no matching export).
 */
export const withoutKyProgress = {
  name: 'ky-without-progress-streams',
  setup(build) {
    build.onLoad({ filter: /[\\/]ky[\\/]distribution[\\/]utils[\\/]body\.js$/ }, () => ({
      contents:
        "const notBundled = () => { throw new Error('@postsched/sdk bundles ky without onDownloadProgress and onUploadProgress'); };\n" +
        'export const streamRequest = notBundled;\nexport const streamResponse = notBundled;\n',
      loader: 'js',
    }));
  },
};

/**
 * ky without its retry machinery's own parts: the SDK owns its retry loop and calls ky with `retry: 0` and no hooks,
 * so ky's retry gives up on its first check (`retryCount > limit`) before it wraps a thrown value (`NonError`), waits
 * (utils/delay.js) or meets a `ForceRetryError` (made only from an afterResponse hook's `ky.retry()`): ~0.2 KB gz. The
 * two error classes become bare ones (never made, so `instanceof` is false as before); the wait throws.
 */
export const withoutKyRetry = {
  name: 'ky-without-retry',
  setup(build) {
    const stubs = {
      'errors/NonError.js': 'export class NonError extends Error {}\n',
      'errors/ForceRetryError.js': 'export class ForceRetryError extends Error {}\n',
      'utils/delay.js': "export default async function delay() { throw new Error('@postsched/sdk bundles ky without its retry wait (it calls ky with retry: 0)'); }\n",
    };
    build.onLoad({ filter: /[\\/]ky[\\/]distribution[\\/](?:errors[\\/](?:NonError|ForceRetryError)|utils[\\/]delay)\.js$/ }, ({ path }) => ({
      contents: stubs[path.replace(/\\/g, '/').replace(/^.*\/distribution\//, '')],
      loader: 'js',
    }));
  },
};

/** Every cut, as tsup.config.ts passes them to esbuild. */
export const DEPENDENCY_CUTS = [withoutIdTokenCheck, withoutKyProgress, withoutKyRetry];

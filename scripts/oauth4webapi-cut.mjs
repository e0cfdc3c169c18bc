// oauth4webapi as the build bundles it (tsup.config.ts), without its OpenID `id_token` check. Every token answer
// reaches oauth4webapi through src/oauth/normalize.ts's `forProcessing`, which drops `id_token` (the SDK is no
// OpenID client: RFC 6749 §5.1, ignore what you do not use), so the branch of `processGenericAccessTokenResponse`
// that validates one as a JWT, with the claim checks behind it, is never taken; it is ~1.4 KB gz of every bundle
// with OAuthClient. It is cut at build time, a refusal left in its place should an `id_token` ever reach it. A new
// oauth4webapi whose source no longer matches fails the build (test/size/oauth4webapi-cut.test.ts).
import { readFile } from 'node:fs/promises';

/** The branch, each of its lines indented deeper than its `if`, right before the token_type check. */
const ID_TOKEN_BRANCH = /\n {4}if \(json\.id_token !== undefined\) \{\n(?: {5}.*\n)+ {4}\}\n(?= {4}if \(recognizedTokenTypes)/;
const REFUSAL = `\n    if (json.id_token !== undefined) throw OPE('"response" body "id_token" is not read', INVALID_RESPONSE);\n`;

/** The esbuild plugin (tsup's `esbuildPlugins`). */
export const withoutIdTokenCheck = {
  name: 'oauth4webapi-without-id-token-check',
  setup(build) {
    build.onLoad({ filter: /[\\/]oauth4webapi[\\/]build[\\/]index\.js$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      if (!ID_TOKEN_BRANCH.test(source)) {
        throw new Error(`${path}: the id_token branch to cut was not found (scripts/oauth4webapi-cut.mjs): update the cut for this oauth4webapi`);
      }
      return { contents: source.replace(ID_TOKEN_BRANCH, REFUSAL), loader: 'js' };
    });
  },
};

// Code of the bundled dependencies that the SDK never reaches, cut from the build (tsup.config.ts `esbuildPlugins`):
// a bundler cannot tree-shake a branch inside a function, or a method of a class, so without these cuts every user
// ships it. Each cut names why the code is unreachable, leaves a loud failure in its place should it ever be reached,
// and fails the build when a new version of the dependency no longer matches it (test/size/dependency-cuts.test.ts).
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * `source` with each of `cuts` applied: [what it cuts, a pattern that must match exactly once, its replacement, and
 * optionally the start of the top-level function it is in (which must be found once; the pattern is then matched in
 * that function, up to its closing `}` at the start of a line)]. A pattern found any other number of times fails the build.
 */
function applyCuts(path, source, cuts, dependency) {
  for (const [what, pattern, replacement, within] of cuts) {
    if (within !== undefined) {
      const start = source.indexOf(within);
      if (start === -1 || source.indexOf(within, start + 1) !== -1) {
        throw new Error(`${path}: ${what}: \`${within.trim()}\` not found once (scripts/dependency-cuts.mjs): update the cut for this ${dependency}`);
      }
      const end = source.indexOf('\n}\n', start) + 3;
      source = source.slice(0, start) + applyCuts(path, source.slice(start, end), [[what, pattern, replacement]], dependency) + source.slice(end);
      continue;
    }
    const found = typeof pattern === 'string' ? source.split(pattern).length - 1 : (source.match(new RegExp(pattern.source, 'g')) ?? []).length;
    if (found !== 1) {
      throw new Error(`${path}: ${what}: found ${found} times, not once (scripts/dependency-cuts.mjs): update the cut for this ${dependency}`);
    }
    source = source.replace(pattern, () => replacement);
  }
  return source;
}

/**
 * A block of a dependency's source (4-space indents): the line `opening` at `indent` spaces, then every line indented deeper (or
 * blank), through the `}` that closes it at `indent`.
 */
const block = (indent, opening) =>
  new RegExp(`\\n {${indent}}${opening.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n(?:(?: {${indent + 1},}[^\\n]*)?\\n)*? {${indent}}\\}(?=\\n)`);

/** The refusal a cut leaves in place of what it cut (`what`, in the words of the dependency's options). */
const notBundledBy = (dependency) => `const notBundled = (what) => { throw new Error(\`@postsched/sdk bundles ${dependency} without \${what}\`); };\n`;

/**
 * oauth4webapi without its OpenID `id_token` check. Every token answer reaches oauth4webapi through
 * src/oauth/normalize.ts's `forProcessing`, which drops `id_token` (the SDK is no OpenID client: RFC 6749 §5.1, ignore
 * what you do not use), so the branch of `processGenericAccessTokenResponse` that validates one as a JWT, with the
 * claim checks behind it, is never taken: ~1.4 KB gz of every bundle with OAuthClient. A refusal stays in its place.
 */
const ID_TOKEN_CHECK = [
  [
    // The branch, each of its lines indented deeper than its `if`, right before the token_type check.
    'the id_token branch',
    /\n {4}if \(json\.id_token !== undefined\) \{\n(?: {5}.*\n)+ {4}\}\n(?= {4}if \(recognizedTokenTypes)/,
    `\n    if (json.id_token !== undefined) throw OPE('"response" body "id_token" is not read', INVALID_RESPONSE);\n`,
  ],
];

/**
 * oauth4webapi as src/oauth/oauth-client.ts calls it: a client `{ client_id }`, request options of its own (`customFetch`,
 * `allowInsecureRequests`, at most a `user-agent` header: no `signal`, no DPoP handle), the `state` a non-empty string
 * it checked, and no JWT read (so nothing is base64url-decoded). So the DPoP proof and nonce of a token request, the
 * mTLS endpoint aliases, the signal option, base64url decoding, the wording of several accepted content types and the
 * `state` checks for "none expected" or "skip" are never reached: ~0.2 KB gz of every bundle with OAuthClient. Each
 * is refused where it was read; a `state` that is not a string is refused by oauth4webapi's own check that remains.
 */
const OAUTH_UNUSED_OPTIONS = [
  ['base64url decoding', /\nlet decodeBase64Url;\nif \(Uint8Array\.fromBase64\) \{\n(?: {4}.*\n)+\}\nelse \{\n(?: {4}.*\n)+\}\n/, "\nconst decodeBase64Url = () => notBundled('base64url decoding');\n"],
  ['options.signal', block(4, 'if (value !== undefined) {'), "\n    if (value !== undefined) notBundled('options.signal');", '\nfunction signal(url, value) {'],
  ['DPoP', block(4, 'if (options?.DPoP !== undefined) {'), "\n    if (options?.DPoP !== undefined) notBundled('DPoP');", '\nasync function tokenEndpointRequest('],
  ['the DPoP nonce', '    options?.DPoP?.cacheNonce(response, url);\n', '', '\nasync function tokenEndpointRequest('],
  [
    'mTLS endpoint aliases',
    block(4, 'if (useMtlsAlias && as.mtls_endpoint_aliases && endpoint in as.mtls_endpoint_aliases) {'),
    "\n    if (useMtlsAlias) notBundled('mtls_endpoint_aliases');",
    '\nexport function resolveEndpoint(',
  ],
  ['mTLS endpoint aliases', '${useMtlsAlias ? `"as.mtls_endpoint_aliases.${endpoint}"` : `"as.${endpoint}"`}', '"as.${endpoint}"', '\nfunction validateEndpoint('],
  ['mTLS endpoint aliases', '{ attribute: useMtlsAlias ? `mtls_endpoint_aliases.${endpoint}` : endpoint }', '{ attribute: endpoint }', '\nfunction validateEndpoint('],
  [
    'several content types',
    /\n {4}if \(types\.length > 2\) \{\n(?: {8}.*\n)+ {4}\}\n {4}else if \(types\.length === 2\) \{\n(?: {8}.*\n)+ {4}\}\n {4}else \{\n {8}msg \+= types\[0\];\n {4}\}\n/,
    "\n    if (types.length !== 1) notBundled('several content types');\n    msg += types[0];\n",
    '\nfunction notJson(',
  ],
  ['the state checks but a string\'s', /\n {8}case undefined:\n {8}case expectNoState:\n(?: {12}.*\n)+ {8}case skipStateCheck:\n {12}break;(?=\n)/, '', '\nexport function validateAuthResponse('],
];

/** A plugin that applies `cuts` to oauth4webapi (one plugin for all of them: esbuild takes one onLoad answer a file). */
const oauth4webapiCut = (name, cuts) => ({
  name,
  setup(build) {
    build.onLoad({ filter: /[\\/]oauth4webapi[\\/]build[\\/]index\.js$/ }, async ({ path }) => ({
      contents: notBundledBy('oauth4webapi') + applyCuts(path, await readFile(path, 'utf8'), cuts, 'oauth4webapi'),
      loader: 'js',
    }));
  },
});

export const withoutIdTokenCheck = oauth4webapiCut('oauth4webapi-without-id-token-check', ID_TOKEN_CHECK);

/** oauth4webapi as the build bundles it: without the id_token check and without what only options the SDK never passes reach. */
export const withoutOauthUnusedOptions = oauth4webapiCut('oauth4webapi-as-the-sdk-calls-it', [...ID_TOKEN_CHECK, ...OAUTH_UNUSED_OPTIONS]);

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
    // The size of a form boundary, for the upload's progress (body.js only), measured as ky loads.
    build.onLoad({ filter: /[\\/]ky[\\/]distribution[\\/]core[\\/]constants\.js$/ }, async ({ path }) => ({
      contents: applyCuts(path, await readFile(path, 'utf8'), [['the form boundary size', /\nexport const usualFormBoundarySize = [^\n]*\n/, '\n']], 'ky'),
      loader: 'js',
    }));
  },
};

/**
 * ky as the SDK calls it, without what only its other options reach. src/http/request.ts is ky's one caller (the
 * private import `#ky`): `ky(url, { timeout, retry: 0, throwHttpErrors: false, redirect: 'manual', fetch, method?,
 * signal?, body?, headers })`, a string URL and a string body, one attempt, every status read by the SDK. So ky's
 * retries (the wait, `NonError`, `ForceRetryError`, the delay rules and their defaults), its hooks, `HTTPError`,
 * `prefixUrl`, `searchParams`, `json`, `parseJson`, the response shortcuts (`.json()`: the SDK reads the Response), a
 * Request or FormData input, and the instance's methods (`ky.get`, `ky.create`, `ky.extend`) are never reached:
 * ~2.5 KB gz of every bundle with PostSched. In their place, the constructor refuses every option it no longer serves,
 * naming it; a ky whose code no longer matches a cut fails the build.
 */
export const withoutKyUnusedOptions = {
  name: 'ky-without-unused-options',
  setup(build) {
    const refusal = notBundledBy('ky');
    const unused = ['hooks', 'context', 'prefixUrl', 'searchParams', 'json', 'parseJson', 'stringifyJson', 'onDownloadProgress', 'onUploadProgress', 'dispatcher', 'next'];
    const kyCuts = [
      // The options the cuts below leave unserved, refused as ky is called.
      [
        'the constructor',
        'constructor(input, options = {}) {\n',
        'constructor(input, options = {}) {\n' +
          `        for (const name of ${JSON.stringify(unused)}) if (options[name] !== undefined) notBundled(name);\n` +
          "        if (options.retry !== 0 || options.throwHttpErrors !== false || typeof input !== 'string') notBundled('retries, HTTPError or a Request input');\n",
      ],
      ['the hooks', "import { mergeHeaders, mergeHooks } from '../utils/merge.js';", "import { mergeHeaders } from '../utils/merge.js';"],
      ['the afterResponse hooks', block(12, 'for (const hook of ky.#options.hooks.afterResponse) {'), ''],
      ['the decorated response (parseJson)', '            ky.#decorateResponse(response);\n', ''],
      ['the HTTPError of throwHttpErrors', block(12, "if (!response.ok && (typeof ky.#options.throwHttpErrors === 'function'"), ''],
      ['onDownloadProgress', block(12, 'if (ky.#options.onDownloadProgress) {'), ''],
      ['the retries', 'ky.#retry(function_)', 'function_()'],
      ['the response shortcuts', block(8, 'for (const [type, mimeType] of Object.entries(responseTypes)) {'), ''],
      // Per call, not bytes: a promise tick before the fetch, and a second Request (its headers copied, an AbortSignal
      // that follows the first) kept for a retry that one attempt never makes.
      ['the tick for the response shortcuts', /\n {12}\/\/ Delay the fetch so that body method shortcuts can set the Accept header\n {12}await Promise\.resolve\(\);/, ''],
      ['the request copy for a retry', /\n {8}\/\/ Cloning is done here to prepare in advance for retries(?=\n {8}this\.#originalRequest = this\.request;\n)/, ''],
      ['the request copy for a retry', '        this.request = this.#originalRequest.clone();\n', ''],
      ['searchParams', block(4, 'static #normalizeSearchParams(searchParams) {'), ''],
      ['the retry count', '    #retryCount = 0;\n', ''],
      ['the normalized options', '    #cachedNormalizedOptions;\n', ''],
      ['the hooks', /\n {12}hooks: mergeHooks\(\{\n(?: {16}\w+: \[\],\n)+ {12}\}, options\.hooks\),/, ''],
      ['prefixUrl', "            prefixUrl: String(options.prefixUrl || ''),\n", ''],
      ['the retry options', '            retry: normalizeRetryOptions(options.retry),\n', ''],
      ['prefixUrl', block(8, "if (this.#options.prefixUrl && typeof this.#input === 'string') {"), ''],
      ['json', block(8, 'if (this.#options.json !== undefined) {'), ''],
      [
        'a FormData body of a Request input',
        /\n {8}const userProvidedContentType = [^\n]*\n {8}if \(this\.#input instanceof globalThis\.Request\n(?: {12}[^\n]*\n)+ {12}this\.#options\.headers\.delete\('content-type'\);\n {8}\}(?=\n)/,
        '',
      ],
      ['searchParams', block(8, 'if (hasSearchParameters(this.#options.searchParams)) {'), ''],
      ['onUploadProgress', block(8, 'if (this.#options.onUploadProgress) {'), ''],
      ['the retry delay', block(4, '#calculateDelay() {'), ''],
      ['the retry decision', block(4, 'async #calculateRetryDelay(error) {'), ''],
      ['parseJson', block(4, '#decorateResponse(response) {'), ''],
      ['the response cancel of hooks and progress', block(4, '#cancelResponseBody(response) {'), ''],
      ['the retry loop', block(4, 'async #retry(function_) {'), ''],
      // Every option the SDK passes is ky's own or a Request's (the constructor refuses the two a fetch alone takes):
      // nothing is left for fetch's own init, which would take a walk of the options and of the Request per call.
      ['the options only fetch takes', 'const nonRequestOptions = findUnknownOptions(this.request, this.#options);', 'const nonRequestOptions = {};'],
      // The headers as given (the SDK's: a plain object of strings), not first copied into a Headers: only the json and
      // FormData parts cut above wrote to that copy, and the Request copies them into its own anyway.
      ['the copy of the headers', '            headers: mergeHeaders(this.#input.headers, options.headers),\n', '            headers: options.headers,\n'],
      ['the copy of the headers', "import { mergeHeaders } from '../utils/merge.js';\n", ''],
      // A new AbortController for an attempt after a time-out: each Ky makes one attempt.
      ['the next attempt', block(8, 'if (this.#abortController?.signal.aborted) {'), ''],
      ['the beforeRequest hooks', block(8, 'for (const hook of this.#options.hooks.beforeRequest) {'), ''],
      ['the hooks\' options', block(4, '#getNormalizedOptions() {'), ''],
      ['a hook\'s request', block(4, '#assignRequest(request) {'), ''],
      ['onUploadProgress', block(4, '#wrapRequestWithUploadProgress(request, originalBody) {'), ''],
    ];
    build.onLoad({ filter: /[\\/]ky[\\/]distribution[\\/](?:index|core[\\/]Ky)\.js$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      const file = path.replace(/\\/g, '/').replace(/^.*\/distribution\//, '');
      if (file === 'core/Ky.js') return { contents: refusal + applyCuts(path, source, kyCuts, 'ky'), loader: 'js' };
      // The entry: `ky(input, options)` of the default instance, without its methods. It has no defaults, so merging
      // them in (`validateAndMerge`: the options copied key by key into new objects, the headers into a Headers) only
      // copies what the constructor copies again: `Ky` is given the SDK's options as they are, and never changes them.
      applyCuts(path, source, [
        ['the call', 'const ky = (input, options) => Ky.create(input, validateAndMerge(defaults, options));', ''],
        ['the default instance', 'const ky = createInstance();', ''],
      ], 'ky');
      return {
        contents:
          "import { Ky } from './core/Ky.js';\n" +
          'const ky = (input, options) => Ky.create(input, options);\nexport default ky;\n' +
          "export { TimeoutError } from './errors/TimeoutError.js';\nexport { isTimeoutError } from './utils/type-guards.js';\n",
        loader: 'js',
        resolveDir: dirname(path),
      };
    });
  },
};

/** Every cut, as tsup.config.ts passes them to esbuild. */
export const DEPENDENCY_CUTS = [withoutOauthUnusedOptions, withoutKyProgress, withoutKyUnusedOptions];

/**
 * `postsched login`: the OAuth authorization-code flow with PKCE on a loopback redirect (RFC 8252 §7.3), for
 * scripts and for trying the SDK against a real service. It prints the URL to open, receives the redirect on
 * 127.0.0.1, exchanges the code and saves the TokenSet in a file only its owner can read.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, unlink } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { dirname, resolve } from 'node:path';
import { ValidationError } from '../core/errors.js';
import { OAuthClient } from '../oauth/oauth-client.js';
import { SCOPES, type Scope, type TokenSet } from '../oauth/types.js';
import { aborted, CliError, type Command, EXIT, parse, required, seconds, UsageError } from './command.js';
import { MOCK_DEFAULTS } from './mock.js';

const DEFAULT_REDIRECT_URI = MOCK_DEFAULTS.redirectUris[1];

const HELP = `Usage: postsched login [options]

Signs a user in with OAuth 2.0 (authorization code + PKCE): prints the URL to open in a browser, waits
for the redirect on 127.0.0.1, exchanges the code and saves the TokenSet to a file (mode 0600).
Every option falls back to its environment variable, so after pasting postsched mock's exports
"npx postsched login" is enough.

Options:
  --base-url <url>        The service ($POSTSCHED_BASE_URL)
  --client-id <id>        Your app's client id ($POSTSCHED_CLIENT_ID)
  --client-secret <s>     Its client secret ($POSTSCHED_CLIENT_SECRET; prefer the variable: a
                          command line ends up in your shell history)
  --scopes <list>         Comma-separated (default: all: ${SCOPES.join(',')})
  --redirect-uri <url>    A loopback URL registered for the app (default ${DEFAULT_REDIRECT_URI})
  --out <file>            Where to save the TokenSet (default tokens.json)
  --timeout <s>           How long to wait for the browser (default 300)
  -h, --help              This help

Exit code 0 when the tokens are saved, 1 when the sign-in failed or timed out, 130 on Ctrl-C.`;

export const loginCommand: Command = {
  name: 'login',
  summary: 'sign a user in (OAuth + PKCE on a loopback redirect) and save the tokens',
  help: HELP,
  async run(args, context) {
    const { values } = parse(args, {
      'base-url': { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      scopes: { type: 'string' },
      'redirect-uri': { type: 'string' },
      out: { type: 'string' },
      timeout: { type: 'string' },
    });
    if (values.help === true) {
      context.out(HELP);
      return EXIT.ok;
    }
    const { env } = context;
    const redirect = loopbackRedirect(values['redirect-uri'] ?? DEFAULT_REDIRECT_URI);
    const scopes = parseScopes(values.scopes);
    const out = resolve(values.out ?? 'tokens.json');
    const timeoutMs = seconds('timeout', values.timeout ?? '300') * 1000;
    let oauth: OAuthClient;
    try {
      oauth = new OAuthClient({
        baseUrl: required('base-url', values['base-url'], 'POSTSCHED_BASE_URL', env),
        clientId: required('client-id', values['client-id'], 'POSTSCHED_CLIENT_ID', env),
        clientSecret: required('client-secret', values['client-secret'], 'POSTSCHED_CLIENT_SECRET', env),
        redirectUri: redirect.href,
      });
    } catch (error) {
      if (error instanceof ValidationError) throw new UsageError(error.message);
      throw error;
    }

    const pending = await oauth.createAuthorizationUrl({ scopes });
    const callback = await serveCallback(redirect, pending.state, async (url) => {
      const tokens = await oauth.exchangeCode(url, pending);
      await saveTokens(out, tokens);
      return tokens;
    });
    context.out('Open this URL in a browser to sign in:');
    context.out('');
    context.out(`  ${pending.url}`);
    context.out('');
    context.out(`Waiting for the redirect to ${redirect.href} (Ctrl-C to cancel)…`);

    const timeout = AbortSignal.timeout(timeoutMs);
    const result = await Promise.race([callback.done, aborted(AbortSignal.any([context.signal, timeout]))]);
    await callback.close();
    if (result === undefined) {
      if (context.signal.aborted) {
        context.err('Sign-in cancelled.');
        return EXIT.interrupted;
      }
      throw new CliError(`no redirect to ${redirect.href} within ${timeoutMs / 1000} s. Is that redirect URI registered for the app?`);
    }
    if ('error' in result) throw result.error;
    const { tokens } = result;
    context.out(`Signed in. Scopes: ${tokens.scopes.join(' ')}.`);
    context.out(
      `The access token is valid until ${new Date(tokens.expiresAt).toISOString()}; ` +
        `${tokens.refreshToken === undefined ? 'no refresh token was issued' : 'a refresh token came with it'}.`,
    );
    context.out(`Saved the TokenSet to ${out} (mode 600). It holds a refresh token: treat the file as a password.`);
    return EXIT.ok;
  },
};

/**
 * Serves the redirect URI on loopback. The callback of this sign-in (its `state`) runs `finish` once; other
 * requests (a favicon, a stale tab) get a 404 or 400 page and change nothing. `done` settles with `finish`.
 */
async function serveCallback(
  redirect: URL,
  state: string,
  finish: (callbackUrl: string) => Promise<TokenSet>,
): Promise<{ done: Promise<{ tokens: TokenSet } | { error: unknown }>; close(): Promise<void> }> {
  let settle: (result: { tokens: TokenSet } | { error: unknown }) => void = () => {};
  const done = new Promise<{ tokens: TokenSet } | { error: unknown }>((resolveDone) => (settle = resolveDone));
  let handled = false;
  const server = createServer((req, res) => {
    // Any page the browser shows may send a request here: one whose target is no URL ("//") is not the callback.
    const url = URL.canParse(req.url ?? '/', redirect.origin) ? new URL(req.url ?? '/', redirect.origin) : undefined;
    if (req.method !== 'GET' || url?.pathname !== redirect.pathname) return page(res, 404, 'Not found', 'This is the postsched login callback.');
    if (handled || url.searchParams.get('state') !== state) {
      return page(res, 400, 'Not this sign-in', 'This is not the answer to the sign-in postsched login waits for: open the URL it printed.');
    }
    handled = true;
    finish(url.href).then(
      (tokens) => {
        page(res, 200, 'Signed in', 'postsched login has the tokens. You can close this tab.');
        settle({ tokens });
      },
      (error: unknown) => {
        page(res, 400, 'Sign-in failed', 'postsched login says why in the terminal.');
        settle({ error });
      },
    );
  });
  await new Promise<void>((resolveListening, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new CliError(`port ${redirect.port} of ${redirect.hostname} is in use: stop what uses it, or pass another registered --redirect-uri`)
          : error,
      ),
    );
    server.listen(Number(redirect.port), redirect.hostname.replace(/^\[|\]$/g, ''), () => resolveListening());
  });
  return {
    done,
    close: () =>
      new Promise<void>((resolveClosed) => {
        server.close(() => resolveClosed());
        server.closeIdleConnections(); // the answered page's connection closes by itself (connection: close)
      }),
  };
}

/** RFC 8252 §7.3: a loopback IP redirect with an explicit port, which this process can listen on. */
function loopbackRedirect(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--redirect-uri must be a URL such as ${DEFAULT_REDIRECT_URI}; got ${JSON.stringify(value.slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' || !['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname) || url.port === '') {
    throw new UsageError(`--redirect-uri must be a loopback http URL with a port, such as ${DEFAULT_REDIRECT_URI}, so that this command can receive it`);
  }
  return url;
}

function parseScopes(value: string | undefined): Scope[] {
  if (value === undefined) return [...SCOPES];
  const scopes = [...new Set(value.split(/[\s,]+/).filter((s) => s !== ''))];
  const unknown = scopes.find((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown !== undefined) throw new UsageError(`--scopes: unknown scope ${JSON.stringify(unknown.slice(0, 50))}; known: ${SCOPES.join(', ')}`);
  if (scopes.length === 0) throw new UsageError(`--scopes is empty; known: ${SCOPES.join(', ')}`);
  return scopes as Scope[];
}

/** Writes the TokenSet atomically (temp file + rename) with mode 0600 from the first byte; makes its folder (0700). */
export async function saveTokens(path: string, tokens: TokenSet): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const file = await open(temp, 'wx', 0o600);
    try {
      await file.writeFile(`${JSON.stringify(tokens, null, 2)}\n`, 'utf8');
    } finally {
      await file.close();
    }
    await chmod(temp, 0o600); // the umask can only take bits away; this makes it exact
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new CliError(`could not save the tokens to ${path}: ${(error as Error).message}`);
  }
}

function page(res: ServerResponse, status: number, title: string, text: string): void {
  res
    .writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' })
    .end(`<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><p>${text}</p>`);
}

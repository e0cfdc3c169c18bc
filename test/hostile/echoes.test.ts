/**
 * Issue 12 items 10 and 11: a server that echoes the credentials it was sent, or a custom fetch that attaches its
 * Request or init to its error, never gets a secret into an error's message, properties or `util.inspect`
 * output; server text with CR/LF or terminal escapes cannot forge log lines.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionError, OAuthClient, OAuthError, PostSched, ReauthorizationRequiredError } from '@postsched/sdk';
import { startServer, type HostileServer } from './server.js';

const ACCESS = 'tok_secret_echo_1';
const REFRESH = 'rt_secret_echo_1';
const CLIENT_SECRET = 'cs_secret_echo_1';
const SECRETS = [ACCESS, REFRESH, CLIENT_SECRET, 'code_secret_echo_1', 'verifier_secret_echo_1'];

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function everythingShown(error: unknown): string {
  return `${String(error)}\n${inspect(error, { depth: 10, showHidden: true })}\n${JSON.stringify(error)}`;
}

function expectNoSecret(error: unknown): void {
  const shown = everythingShown(error);
  for (const secret of SECRETS) expect(shown).not.toContain(secret);
}

describe('a server that echoes credentials', () => {
  it('API errors: the access token echoed in the body, a header and the request id never shows; CR/LF are escaped', async () => {
    server = await startServer((req, res) => {
      const token = String(req.headers.authorization).replace('Bearer ', '');
      res.writeHead(400, { 'content-type': 'application/json', 'x-debug': `Bearer ${token}`, 'x-request-id': `req_${token}` });
      res.end(JSON.stringify({ error: { message: `bad token ${token}\r\n[info] user admin logged in\u001b[2J` }, token }));
    });
    const client = new PostSched({ baseUrl: server.url, auth: ACCESS, maxRetries: 0 });
    const error = await client.posts.get('post_1').catch((e: unknown) => e);
    expect((error as Error).name).toBe('BadRequestError');
    expectNoSecret(error);
    const { message } = error as Error;
    expect(message).not.toMatch(/[\r\n\u001b]/);
    expect(message).toContain('\\r\\n[info] user admin logged in');
    expect((error as { body: { token: string } }).body.token).toBe('[redacted]');
  });

  it('a 2xx body that is not the expected shape keeps its raw body on the error, without the echoed token', async () => {
    server = await startServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 42, echo: String(req.headers.authorization) }));
    });
    const client = new PostSched({ baseUrl: server.url, auth: ACCESS, maxRetries: 0 });
    const error = await client.posts.get('post_1').catch((e: unknown) => e);
    expect((error as Error).name).toBe('ResponseValidationError');
    expectNoSecret(error);
    expect((error as { body: { echo: string } }).body.echo).toBe('Bearer [redacted]');
  });

  it('token endpoint errors: the refresh token and client secret echoed in error_description never show', async () => {
    server = await startServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: 'invalid_grant',
          error_description: `refresh token ${form.get('refresh_token')} of client ${form.get('client_secret')} is revoked\r\nFAKE LINE`,
          error_uri: `https://errors.example/?rt=${form.get('refresh_token')}`,
        }),
      );
    });
    const oauth = new OAuthClient({ baseUrl: server.url, clientId: 'app', clientSecret: CLIENT_SECRET, redirectUri: 'http://127.0.0.1/cb' });
    const error = await oauth.refresh(REFRESH).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReauthorizationRequiredError);
    expectNoSecret(error);
    expect((error as Error).message).not.toMatch(/[\r\n]/);
    expect((error as OAuthError).error_description).toContain('refresh token [redacted] of client [redacted]');
  });

  it('code exchange errors: the code and the verifier echoed back never show', async () => {
    server = await startServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_grant', error_description: `code ${form.get('code')} / verifier ${form.get('code_verifier')}` }));
    });
    const oauth = new OAuthClient({ baseUrl: server.url, clientId: 'app', clientSecret: CLIENT_SECRET, redirectUri: 'http://127.0.0.1/cb' });
    const error = await oauth
      .exchangeCode('http://127.0.0.1/cb?code=code_secret_echo_1&state=st_1', { state: 'st_1', codeVerifier: 'verifier_secret_echo_1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expectNoSecret(error);
  });
});

describe('a custom fetch whose error holds the request', () => {
  it('API path: an Error carrying the Request and its init becomes a ConnectionError with none of it', async () => {
    const fetch = async (request: Request, init?: RequestInit) => {
      throw Object.assign(new Error(`upstream refused ${request.headers.get('authorization')}`), { request, init, headers: request.headers });
    };
    const client = new PostSched({ baseUrl: 'https://api.example', auth: ACCESS, fetch, maxRetries: 0 });
    const error = await client.posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expectNoSecret(error);
  });

  it('API path: a thrown non-Error (a string with the token) becomes a ConnectionError without it', async () => {
    const fetch = async (request: Request) => {
      throw `failed: ${request.headers.get('authorization')}`;
    };
    const client = new PostSched({ baseUrl: 'https://api.example', auth: ACCESS, fetch, maxRetries: 0 });
    const error = await client.posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expectNoSecret(error);
  });

  it('token path: an Error carrying init (client secret, code, verifier in its body) becomes a ConnectionError with none of it', async () => {
    const fetch = async (_url: string, init: RequestInit) => {
      throw Object.assign(new TypeError(`fetch failed for ${String(init.body)}`), { init, body: String(init.body) });
    };
    const oauth = new OAuthClient({ baseUrl: 'https://auth.example', clientId: 'app', clientSecret: CLIENT_SECRET, redirectUri: 'https://app.example/cb', fetch });
    const exchange = await oauth
      .exchangeCode('https://app.example/cb?code=code_secret_echo_1&state=st_1', { state: 'st_1', codeVerifier: 'verifier_secret_echo_1' })
      .catch((e: unknown) => e);
    expect(exchange).toBeInstanceOf(ConnectionError);
    expectNoSecret(exchange);
    const refresh = await oauth.refresh(REFRESH).catch((e: unknown) => e);
    expect(refresh).toBeInstanceOf(ConnectionError);
    expectNoSecret(refresh);
  });
});

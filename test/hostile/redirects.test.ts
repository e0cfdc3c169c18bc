/**
 * Issue 12 item 4: API calls never follow a redirect. Following sent custom headers to whatever host the
 * Location named, returned the foreign answer as the API's, and turned a write answered 303 into a GET.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APIError, OAuthClient, OAuthResponseError, PostSched, RedirectError } from '@postsched/sdk';
import { startServer, type HostileServer } from './server.js';

const servers: HostileServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function elsewhere(): Promise<{ server: HostileServer; headers: Array<Record<string, unknown>> }> {
  const headers: Array<Record<string, unknown>> = [];
  const server = await startServer((req, res) => {
    headers.push({ ...req.headers });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'post_evil', account_ids: ['acc_evil'], data: [], next_cursor: null }));
  });
  servers.push(server);
  return { server, headers };
}

async function redirecting(status: number, location: string): Promise<HostileServer> {
  const server = await startServer((req, res) => {
    req.resume();
    res.writeHead(status, { location, 'x-request-id': 'req_redirect' });
    res.end();
  });
  servers.push(server);
  return server;
}

describe('API calls and redirects', () => {
  it.each([301, 302, 307, 308])('a GET answered %i to another host is a RedirectError naming the Location; nothing reaches that host', async (status) => {
    const target = await elsewhere();
    const api = await redirecting(status, `${target.server.url}/steal`);
    const client = new PostSched({ baseUrl: api.url, auth: 'tok_secret_1', headers: { 'x-api-key': 'key_secret_1' }, maxRetries: 0 });
    const error = await client.posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedirectError);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ status, location: `${target.server.url}/steal`, requestId: 'req_redirect' });
    expect((error as Error).message).toContain(`${target.server.url}/steal`);
    expect((error as Error).message).toContain('baseUrl');
    expect(target.headers).toHaveLength(0);
  });

  it('a POST answered 303 is not turned into a GET whose answer comes back as the created post', async () => {
    const target = await elsewhere();
    const api = await redirecting(303, `${target.server.url}/posts/post_evil`);
    const client = new PostSched({ baseUrl: api.url, auth: 'tok_secret_1', maxRetries: 2 });
    const error = await client.posts
      .create({ account_ids: ['acc_1'], publish_at: new Date(Date.now() + 86_400_000) }, { idempotencyKey: 'k1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedirectError);
    expect(api.requests).toEqual(['POST /posts']); // sent once, not retried, not followed
    expect(target.headers).toHaveLength(0);
  });

  it('a relative Location is named as the service sent it', async () => {
    const api = await redirecting(301, '/v2/posts/post_1');
    const client = new PostSched({ baseUrl: api.url, auth: 'tok_1', maxRetries: 0 });
    const error = await client.posts.get('post_1').catch((e: unknown) => e);
    expect(error).toMatchObject({ location: '/v2/posts/post_1' });
    expect(api.requests).toEqual(['GET /posts/post_1']);
  });

  it('a Location holding the access token or control characters does not bring them into the message', async () => {
    const api = await redirecting(302, 'https://evil.example/?t=tok_secret_2&x=%0d%0a');
    const client = new PostSched({ baseUrl: api.url, auth: 'tok_secret_2', maxRetries: 0 });
    const error = (await client.posts.get('post_1').catch((e: unknown) => e)) as RedirectError;
    expect(error).toBeInstanceOf(RedirectError);
    expect(error.message).not.toContain('tok_secret_2');
    expect(String(error.location)).not.toContain('tok_secret_2');
  });
});

describe('the token endpoint and redirects', () => {
  // A 307 or 308 would re-send the form (client secret, refresh token or code and verifier) to the Location's host.
  it.each([301, 302, 303, 307, 308])('a token request answered %i is not followed: a typed error, nothing reaches the Location', async (status) => {
    const target = await elsewhere();
    const api = await redirecting(status, `${target.server.url}/oauth/token`);
    const oauth = new OAuthClient({ baseUrl: api.url, clientId: 'app', clientSecret: 'cs_secret_1', redirectUri: 'http://127.0.0.1/cb' });
    const error = await oauth.refresh('rt_secret_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthResponseError);
    expect(error).toMatchObject({ status });
    expect((error as Error).message).not.toMatch(/cs_secret_1|rt_secret_1/);
    expect(api.requests).toEqual(['POST /oauth/token']);
    expect(target.headers).toHaveLength(0);
  });
});

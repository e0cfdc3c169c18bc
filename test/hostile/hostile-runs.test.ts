/**
 * Issue 22: the small defects hostile runs found, each with the behaviour a user relies on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APIError, AuthenticationError, PostSched, RateLimitError, RedirectError, ValidationError } from '@postsched/sdk';
import { startServer, type HostileServer } from './server.js';

const TOKEN = 'tok_secret_echoed_0123456789';
const POST = { id: 'post_1', account_ids: ['acc_1'] };

describe('a server that echoes the token in x-request-id', () => {
  const answer = (status: number) => Response.json(status === 200 ? POST : { error: 'no' }, { status, headers: { 'x-request-id': `req_1 ${TOKEN}` } });

  it('never hands it to onResponse, withResponse() or the error', async () => {
    const seen: unknown[] = [];
    const client = new PostSched({ baseUrl: 'https://api.example', auth: TOKEN, maxRetries: 0, onResponse: (info) => seen.push(info), fetch: async () => answer(200) });
    const { requestId } = await client.posts.get('post_1').withResponse();
    const failing = new PostSched({ baseUrl: 'https://api.example', auth: TOKEN, maxRetries: 0, onResponse: (info) => seen.push(info), fetch: async () => answer(401) });
    const error = await failing.posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(requestId).toBe('req_1 [redacted]');
    expect((seen[0] as { requestId: string }).requestId).toBe('req_1 [redacted]');
    expect((error as APIError).requestId).toBe('req_1 [redacted]');
    expect(JSON.stringify(seen)).not.toContain(TOKEN);
  });
});

describe('raw-call paths that leave the base URL once a server decodes them', () => {
  it.each(['/a/..%2fadmin', '/a/%2e%2e%2fadmin', '/a/%5c..%5cadmin', '/a/..%2Fadmin', '/a/%252e%252e/admin', '/a/.%2e/admin', '/%2e'])(
    'refuses %j before anything is sent',
    async (path) => {
      let sent = 0;
      const client = new PostSched({ baseUrl: 'https://api.example/v1', auth: TOKEN, fetch: async () => (sent++, Response.json({})) });
      const error = await client.get(path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).path).toEqual(['path']);
      expect(sent).toBe(0);
    },
  );

  it('still sends a path whose encoded characters are not dot segments', async () => {
    const urls: string[] = [];
    const client = new PostSched({ baseUrl: 'https://api.example/v1', auth: TOKEN, fetch: async (request) => (urls.push(request.url), Response.json({})) });
    await client.get('/files/report%2Etxt/a%2Fb/..x');
    expect(urls).toEqual(['https://api.example/v1/files/report%2Etxt/a%2Fb/..x']);
  });
});

describe('dot segments as lenient servers read them (issue 27): Tomcat path parameters, IIS %u, overlong UTF-8, fullwidth dots', () => {
  const HOSTILE = [
    '/a/..;/admin',
    '/a/..;jsessionid=1/admin',
    '/a/.;x/admin',
    '/a/%u002e%u002e/admin',
    '/a/%U002E%u002e%u002fadmin',
    '/a/%25u002e%25u002e/admin',
    '/a/%c0%ae%c0%ae/admin',
    '/a/%C0%AE%c0%ae%c0%afadmin',
    '/a/%e0%80%ae%e0%80%ae/admin',
    '/a/\uff0e\uff0e/admin',
    '/a/%EF%BC%8E%EF%BC%8E/admin',
    '/a/\u2025/admin',
  ].map((path) => JSON.parse(`"${path}"`) as string);

  it.each(HOSTILE)('refuses the raw path %j before anything is sent', async (path) => {
    let sent = 0;
    const client = new PostSched({ baseUrl: 'https://api.example/v1', auth: TOKEN, fetch: async () => (sent++, Response.json({})) });
    const error = await client.get(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toMatch(/^`path` cannot hold "\." or "\.\." segments/);
    expect(sent).toBe(0);
  });

  it.each(['..;', '.;x', '%u002e%u002e', '%c0%ae%c0%ae', '\uff0e\uff0e', '%2e%2e', '%252e%252e;x'].map((id) => JSON.parse(`"${id}"`) as string))(
    'refuses the id %j before anything is sent',
    async (id) => {
      let sent = 0;
      const client = new PostSched({ baseUrl: 'https://api.example/v1', auth: TOKEN, fetch: async () => (sent++, Response.json(POST)) });
      const error = await client.posts.get(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).path).toEqual(['id']);
      expect(sent).toBe(0);
    },
  );

  // The same bytes a raw call is refused for (`/posts/..%2Fadmin`, above): an id is encoded into one segment, but a
  // server or proxy that decodes %2F or %5C before it resolves dot segments (nginx passing a normalized URI) reads it.
  it.each(['../admin', 'a/../b', 'x/..', './x', 'a/./b', '..\\admin', '%2E%2E%2Fadmin', 'x%2f..'])(
    'refuses the id %j, whose "/" or "\\" makes a dot segment once a server decodes it, before anything is sent',
    async (id) => {
      let sent = 0;
      const client = new PostSched({ baseUrl: 'https://api.example/v1', auth: TOKEN, fetch: async () => (sent++, Response.json(POST)) });
      for (const call of [() => client.posts.get(id), () => client.posts.delete(id), () => client.analytics.getPost(id), () => client.accounts.get(id)]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ValidationError);
      }
      expect(sent).toBe(0);
    },
  );

  it('still sends an id holding "/" or "\\" without a dot segment, as one encoded segment', async () => {
    const urls: string[] = [];
    const client = new PostSched({ baseUrl: 'https://api.example/v1', auth: TOKEN, fetch: async (request) => (urls.push(request.url), Response.json(POST)) });
    await client.posts.get('a/b\\c/..x/x..');
    expect(urls).toEqual(['https://api.example/v1/posts/a%2Fb%5Cc%2F..x%2Fx..']);
  });

  it('still sends paths and ids whose dots, semicolons and wide characters make no dot segment', async () => {
    const urls: string[] = [];
    const client = new PostSched({ baseUrl: 'https://api.example/v1', auth: TOKEN, fetch: async (request) => (urls.push(request.url), Response.json(POST)) });
    await client.get('/files/a;..;b/..x;/x..;/%c0%af%c0%aex');
    await client.posts.get('post_1;v=2');
    await client.posts.get('\uff0e'.repeat(3));
    expect(urls).toEqual([
      'https://api.example/v1/files/a;..;b/..x;/x..;/%c0%af%c0%aex',
      'https://api.example/v1/posts/post_1%3Bv%3D2',
      `https://api.example/v1/posts/${encodeURIComponent('\uff0e'.repeat(3))}`,
    ]);
  });
});

describe('a rate-limit reset from far in the future', () => {
  it.each([['x-ratelimit-reset', '99999999999999'], ['ratelimit-reset', '99999999999999'], ['ratelimit-reset', '40000000']])(
    '%s: %s is left out of rateLimit, not a reset years away',
    async (name, value) => {
      const client = new PostSched({
        baseUrl: 'https://api.example',
        auth: TOKEN,
        fetch: async () => Response.json(POST, { headers: { 'x-ratelimit-limit': '100', [name]: value } }),
      });
      const { rateLimit } = await client.posts.get('post_1').withResponse();
      expect(rateLimit).toEqual({ limit: 100, remaining: undefined, resetMs: undefined });
    },
  );

  it('keeps a reset within the year', async () => {
    const client = new PostSched({ baseUrl: 'https://api.example', auth: TOKEN, maxRetries: 0, fetch: async () => Response.json({}, { status: 429, headers: { 'x-ratelimit-reset': '3600' } }) });
    const error = await client.posts.get('post_1').catch((e: unknown) => e);
    expect((error as RateLimitError).rateLimit?.resetMs).toBe(3_600_000);
  });
});

describe('an upload answered with a redirect', () => {
  let server: HostileServer | undefined;
  afterEach(() => server?.close());

  it('is a RedirectError, as for every other call, and is not sent again', async () => {
    server = await startServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(307, { location: '/elsewhere' }).end());
    });
    const client = new PostSched({ baseUrl: server.url, auth: TOKEN });
    const upload = (file: Blob | ReadableStream<Uint8Array>) => client.media.upload({ file, filename: 'a.bin' }).catch((e: unknown) => e);
    const stream = new ReadableStream<Uint8Array>({ pull: (c) => (c.enqueue(new Uint8Array(8)), c.close()) });
    for (const error of [await upload(new Blob([new Uint8Array(8)])), await upload(stream)]) {
      expect(error).toBeInstanceOf(RedirectError);
      expect(error).toBeInstanceOf(APIError);
      expect((error as Error).message).not.toContain(TOKEN);
    }
    expect(server.requests).toEqual(['POST /media', 'POST /media']);
  });
});

/**
 * Issue 12 item 1: no answer can make the SDK read without bound. API calls stop at `maxResponseBytes`
 * (default 32 MiB), token answers at 64 KiB, counted after decompression, and the connection is dropped.
 */
import { createGzip } from 'node:zlib';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterEach, describe, expect, it } from 'vitest';
import { OAuthClient, PostSched, ResponseTooLargeError } from '@postsched/sdk';
import { startServer, streamBody, type HostileServer } from './server.js';

const MiB = 1024 * 1024;
const CHUNK = new Uint8Array(64 * 1024).fill(0x20); // spaces: valid JSON whitespace, endlessly

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function client(maxResponseBytes?: number): PostSched {
  return new PostSched({ baseUrl: server!.url, auth: 'tok_1', maxRetries: 0, ...(maxResponseBytes === undefined ? {} : { maxResponseBytes }) });
}

describe('a body larger than the client reads', () => {
  it('an endless body ends in ResponseTooLargeError at maxResponseBytes, and the connection is dropped', async () => {
    let sent: Promise<{ written: number; clientClosed: boolean }> | undefined;
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      sent = streamBody(res, CHUNK);
    });
    const error = await client(1 * MiB).posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ limitBytes: 1 * MiB, status: 200 });
    expect((error as Error).message).toContain('maxResponseBytes');
    const { written, clientClosed } = await sent!;
    expect(clientClosed).toBe(true);
    // What the kernel's socket buffers hold on top of the limit, not an endless stream.
    expect(written).toBeLessThan(64 * MiB);
  });

  it('a 2 GB body announced by Content-Length is refused before it is read', async () => {
    let sent: Promise<{ written: number; clientClosed: boolean }> | undefined;
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 * 1024 * MiB) });
      sent = streamBody(res, CHUNK, 2 * 1024 * MiB);
    });
    const error = await client().posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ limitBytes: 32 * MiB });
    const { written, clientClosed } = await sent!;
    expect(clientClosed).toBe(true);
    expect(written).toBeLessThan(64 * MiB);
  });

  it('a 2 GB chunked body stops at the default 32 MiB with memory flat', async () => {
    let sent: Promise<{ written: number; clientClosed: boolean }> | undefined;
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      sent = streamBody(res, CHUNK, 2 * 1024 * MiB);
    });
    const before = process.memoryUsage().rss;
    const error = await client().posts.list().toArray().catch((e: unknown) => e);
    const grown = process.memoryUsage().rss - before;
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    const { written } = await sent!;
    expect(written).toBeLessThan(2 * 1024 * MiB);
    // 32 MiB of chunks plus their concatenation at most, never the 2 GB.
    expect(grown).toBeLessThan(200 * MiB);
  });

  it('a gzip bomb is counted after decompression: 32 MiB of zeros from a few KB stops at the limit', async () => {
    let compressedSent = 0;
    let closed: Promise<void> | undefined;
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gzip = createGzip({ level: 1 });
      gzip.on('data', (chunk: Buffer) => (compressedSent += chunk.byteLength));
      gzip.pipe(res);
      closed = new Promise((resolve) => res.on('close', () => resolve()));
      void streamBody(gzip as unknown as Parameters<typeof streamBody>[0], new Uint8Array(256 * 1024), 1024 * MiB);
    });
    const before = process.memoryUsage().rss;
    const error = await client(4 * MiB).posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ limitBytes: 4 * MiB });
    await closed;
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * MiB);
    // The bomb's compressed bytes stop flowing once the client stops reading (1 GB of zeros would be ~1 MB).
    expect(compressedSent).toBeLessThan(1024 * MiB);
  });

  it('an error answer (500) with an endless body is bounded too', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      void streamBody(res, CHUNK);
    });
    const error = await client(1 * MiB).posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ status: 500 });
  });

  it('an answer just under the limit is read whole', async () => {
    const body = JSON.stringify({ id: 'post_1', account_ids: ['acc_1'], text: 'x'.repeat(MiB - 100) });
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    const post = await client(Buffer.byteLength(body)).posts.get('post_1');
    expect(post.text).toHaveLength(MiB - 100);
    const tooSmall = await client(Buffer.byteLength(body) - 1).posts.get('post_1').catch((e: unknown) => e);
    expect(tooSmall).toBeInstanceOf(ResponseTooLargeError);
  });

  it('counts a body whose Content-Length says less than it holds (a custom fetch need not enforce it)', async () => {
    // 4 MiB of JSON whitespace, announced as 2 bytes.
    const body = (): ReadableStream<Uint8Array> => {
      let chunks = 64;
      return new ReadableStream({ pull: (controller) => (chunks-- > 0 ? controller.enqueue(CHUNK) : controller.close()) }, { highWaterMark: 0 });
    };
    const lying = (): Promise<Response> =>
      Promise.resolve(new Response(body(), { status: 200, headers: { 'content-type': 'application/json', 'content-length': '2' } }));
    const sdk = new PostSched({ baseUrl: 'https://api.example', auth: 'tok_1', maxRetries: 0, maxResponseBytes: MiB, fetch: lying });
    const error = await sdk.posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ limitBytes: MiB });
  });

  // msw's mocked answers (the in-process setup the README shows) are such streams: cancelling one never settles.
  it('ends in ResponseTooLargeError, not a time-out, when the body stream never settles its cancel (msw, a polyfill)', async () => {
    const stuck = (announced?: string) => (): Promise<Response> => {
      const body = new ReadableStream<Uint8Array>({ pull: (controller) => controller.enqueue(CHUNK), cancel: () => new Promise<void>(() => {}) });
      return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'application/json', ...(announced && { 'content-length': announced }) } }));
    };
    for (const fetch of [stuck(), stuck(String(4 * MiB))]) {
      const sdk = new PostSched({ baseUrl: 'https://api.example', auth: 'tok_1', maxRetries: 0, maxResponseBytes: MiB, timeoutMs: 20_000, fetch });
      const error = await sdk.posts.get('post_1').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ResponseTooLargeError);
      const oauth = new OAuthClient({ baseUrl: 'https://api.example', clientId: 'app', clientSecret: 'cs_secret', redirectUri: 'http://127.0.0.1/cb', timeoutMs: 20_000, fetch });
      expect(await oauth.refresh('rt_secret_value').catch((e: unknown) => e)).toBeInstanceOf(ResponseTooLargeError);
    }
    const mocked = setupServer(http.get('https://api.example/posts/post_1', () => new HttpResponse(' '.repeat(2 * MiB), { headers: { 'content-type': 'application/json' } })));
    mocked.listen({ onUnhandledRequest: 'error' });
    try {
      const sdk = new PostSched({ baseUrl: 'https://api.example', auth: 'tok_1', maxRetries: 0, maxResponseBytes: MiB, timeoutMs: 20_000 });
      expect(await sdk.posts.get('post_1').catch((e: unknown) => e)).toBeInstanceOf(ResponseTooLargeError);
    } finally {
      mocked.close();
    }
  }, 90_000);

  it('refuses a maxResponseBytes that is not a positive integer', () => {
    expect(() => new PostSched({ baseUrl: 'https://api.example', auth: 't', maxResponseBytes: 0 })).toThrow(/maxResponseBytes/);
    expect(() => new PostSched({ baseUrl: 'https://api.example', auth: 't', maxResponseBytes: 1.5 })).toThrow(/maxResponseBytes/);
  });
});

describe('a token answer larger than a token answer can be', () => {
  it('stops at 64 KiB with ResponseTooLargeError, without the refresh token in the message', async () => {
    let sent: Promise<{ written: number; clientClosed: boolean }> | undefined;
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      sent = streamBody(res, CHUNK);
    });
    const oauth = new OAuthClient({ baseUrl: server.url, clientId: 'app', clientSecret: 'cs_secret', redirectUri: 'http://127.0.0.1/cb' });
    const error = await oauth.refresh('rt_secret_value').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ limitBytes: 64 * 1024 });
    expect((error as Error).message).not.toMatch(/rt_secret_value|cs_secret/);
    expect((await sent!).clientClosed).toBe(true);
  });
});

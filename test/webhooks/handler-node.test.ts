/**
 * createWebhookHandler().node on real sockets (127.0.0.1): node:http, Express (with and without body parsers) and
 * Fastify (raw Buffer body); duplicate, failing and forged deliveries; bodies refused without being read.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NOW, SECRET, T, backends, header, publishedBody } from './backends.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

interface Served {
  url: string;
  /** What the server saw of each request, once its socket closed: bytes read off the socket. */
  sockets: Promise<number>[];
}

async function serve(listener: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<Served> {
  const sockets: Promise<number>[] = [];
  const server = createServer((req, res) => {
    sockets.push(new Promise((resolve) => req.socket.once('close', () => resolve(req.socket.bytesRead))));
    void listener(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.closeIdleConnections();
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, sockets };
}

const deliver = (url: string, body = publishedBody, { t = T, secret = SECRET, method = 'POST' } = {}) =>
  fetch(url, {
    method,
    ...(method === 'GET' ? {} : { body }),
    headers: { 'content-type': 'application/json', 'x-service-signature': header(secret, t, body) },
  });

/**
 * A hostile sender on a raw socket: a chunked POST of `totalBytes` that keeps sending whatever the answer, until
 * everything is sent or the server closes the connection. Resolves with what was sent and what came back.
 */
function upload(url: string, headers: Record<string, string>, totalBytes: number) {
  return new Promise<{ sent: number; answer: string }>((resolve) => {
    const { hostname, port, pathname } = new URL(url);
    const socket = connect(Number(port), hostname);
    const result = { sent: 0, answer: '' };
    const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x20), Buffer.from('\r\n')]);
    socket.setEncoding('latin1').on('data', (text: string) => (result.answer += text));
    socket.on('error', () => {});
    socket.on('close', () => resolve(result));
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`POST ${pathname} HTTP/1.1\r\nhost: ${hostname}\r\ntransfer-encoding: chunked\r\n${lines}\r\n`);
    const pump = () => {
      while (result.sent < totalBytes && !socket.destroyed) {
        result.sent += 0x10000;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      if (!socket.destroyed) socket.end('0\r\n\r\n');
    };
    pump();
  });
}

describe.each(backends)('createWebhookHandler().node ($name)', ({ api }) => {
  const { createWebhookHandler } = api;
  type Options = Parameters<typeof createWebhookHandler>[0];
  const make = (options: Partial<Options> = {}) =>
    createWebhookHandler({ secret: SECRET, now: NOW, on: {}, onError: () => {}, ...options });

  it('serves node:http directly: 204 after the handler, once for a duplicate', async () => {
    const handled = vi.fn();
    const webhooks = make({ on: { 'post.published': (event) => handled(event.data.published_at) } });
    const { url } = await serve(webhooks.node);
    const first = await deliver(url);
    expect(first.status).toBe(204);
    expect(first.headers.get('connection')).not.toBe('close'); // a read body keeps the connection alive
    expect((await deliver(url, publishedBody, { t: T + 60 })).status).toBe(204);
    expect(handled.mock.calls).toEqual([['2024-05-01T12:00:00Z']]);
  });

  it('answers 500 when the handler fails, then runs the retry', async () => {
    const onError = vi.fn();
    let calls = 0;
    const webhooks = make({
      onError,
      on: {
        'post.published': async () => {
          calls += 1;
          if (calls === 1) throw new Error('queue unavailable');
        },
      },
    });
    const { url } = await serve(webhooks.node);
    const failed = await deliver(url);
    expect([failed.status, await failed.text()]).toEqual([500, 'server_error']);
    expect(onError).toHaveBeenCalledWith(new Error('queue unavailable'), expect.objectContaining({ status: 500 }));
    expect((await deliver(url)).status).toBe(204);
    expect(calls).toBe(2);
  });

  it('answers 503 in_flight with Retry-After (handlerTimeoutMs in seconds) while another instance handles the event', async () => {
    const handled = vi.fn();
    const webhooks = make({ handlerTimeoutMs: 2_500, dedupe: { claim: () => 'in-flight', release: () => {} }, on: { 'post.published': handled } });
    const { url } = await serve(webhooks.node);
    const busy = await deliver(url);
    expect([busy.status, busy.headers.get('retry-after'), await busy.text()]).toEqual([503, '3', 'in_flight']);
    expect(handled).not.toHaveBeenCalled();
  });

  it('answers 400 with the reason to a forged delivery and runs nothing', async () => {
    const handled = vi.fn();
    const { url } = await serve(make({ on: { 'post.published': handled } }).node);
    const forged = await deliver(url, publishedBody, { secret: 'whsec_forged' });
    expect([forged.status, await forged.text()]).toEqual([400, 'no_matching_signature']);
    const tampered = await fetch(url, {
      method: 'POST',
      body: publishedBody.replace('acc_1', 'acc_9'),
      headers: { 'x-service-signature': header(SECRET, T, publishedBody) },
    });
    expect([tampered.status, await tampered.text()]).toEqual([400, 'no_matching_signature']);
    expect(handled).not.toHaveBeenCalled();
  });

  it('answers 405 with Allow: POST to a GET', async () => {
    const { url } = await serve(make().node);
    const response = await deliver(url, '', { method: 'GET' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('refuses an unsigned 64 MiB upload on its header and closes the connection without reading it', async () => {
    const { url, sockets } = await serve(make().node);
    const result = await upload(url, { 'content-type': 'application/json' }, 64 * 1024 * 1024);
    expect(result.answer).toMatch(/^HTTP\/1\.1 400 [^]*\r\nconnection: close\r\n[^]*missing_signature$/i);
    // The sender is cut off: what crossed is socket buffers at most, not the 64 MiB.
    expect(result.sent).toBeLessThan(16 * 1024 * 1024);
    expect(await sockets[0]).toBeLessThan(16 * 1024 * 1024);
  });

  it('stops reading a signed upload at maxBodyBytes, answers 400 body_too_large and closes the connection', async () => {
    const answers: number[] = [];
    const webhooks = make({ maxBodyBytes: 1024 * 1024 });
    const { url, sockets } = await serve(async (req, res) => {
      await webhooks.node(req, res);
      answers.push(res.statusCode);
    });
    const signature = header(SECRET, T, 'anything'); // a valid header and timestamp: only the body is wrong
    const result = await upload(url, { 'x-service-signature': signature }, 64 * 1024 * 1024);
    expect(result.answer).toMatch(/^HTTP\/1\.1 400 [^]*\r\nconnection: close\r\n[^]*body_too_large$/i);
    expect(answers).toEqual([400]);
    expect(result.sent).toBeLessThan(16 * 1024 * 1024);
    expect(await sockets[0]).toBeLessThan(16 * 1024 * 1024);
  });

  it('refuses a Content-Length over the cap before reading', async () => {
    const onError = vi.fn();
    const { url } = await serve(make({ maxBodyBytes: 100, onError }).node);
    const response = await deliver(url);
    expect([response.status, await response.text()]).toEqual([400, 'body_too_large']);
    expect(response.headers.get('connection')).toBe('close');
  });

  it('settles, running nothing, for a sender that went away before an async middleware handed the request on', async () => {
    const handled = vi.fn();
    const onError = vi.fn();
    const webhooks = make({ on: { 'post.published': handled }, onError });
    let outcome: Promise<string> | undefined;
    const { url } = await serve(async (req, res) => {
      await new Promise((resolve) => req.once('close', resolve)); // a slow middleware: the sender aborts meanwhile
      outcome = webhooks.node(req, res).then(() => 'settled');
    });
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    const signature = header(SECRET, T, publishedBody);
    socket.write(`POST /webhooks HTTP/1.1\r\nhost: x\r\ncontent-length: ${publishedBody.length}\r\nx-service-signature: ${signature}\r\n\r\n{"ev`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await vi.waitFor(() => expect(outcome).toBeDefined());
    const late = new Promise((resolve) => setTimeout(resolve, 1_000, 'still pending'));
    expect(await Promise.race([outcome, late])).toBe('settled');
    expect(handled).not.toHaveBeenCalled();
    expect(onError.mock.calls[0]![0]).toMatchObject({ reason: 'body_not_raw' });
  });

  it('reads a request that a middleware paused before handing it on', async () => {
    const handled = vi.fn();
    const webhooks = make({ on: { 'post.published': handled } });
    const { url } = await serve(async (req, res) => {
      req.pause(); // as a middleware that buffers nothing but holds the stream while it works
      await new Promise((resolve) => setTimeout(resolve, 20));
      await webhooks.node(req, res);
    });
    const response = await deliver(url);
    expect(response.status).toBe(204);
    expect(handled).toHaveBeenCalledTimes(1);
  });

  describe('Express', () => {
    it('works mounted with no body parser before it', async () => {
      const handled = vi.fn();
      const app = express();
      app.post('/webhooks', make({ on: { 'post.published': handled } }).node);
      const { url } = await serve(app);
      expect((await deliver(url)).status).toBe(204);
      expect(handled).toHaveBeenCalledOnce();
    });

    it('uses the raw Buffer express.raw() leaves in req.body', async () => {
      const handled = vi.fn();
      const app = express();
      app.post('/webhooks', express.raw({ type: 'application/json' }), make({ on: { 'post.published': handled } }).node);
      const { url } = await serve(app);
      expect((await deliver(url)).status).toBe(204);
      expect((await deliver(url, publishedBody, { secret: 'whsec_forged' })).status).toBe(400);
      expect(handled).toHaveBeenCalledOnce();
    });

    it('answers 500 and says why when express.json() parsed the body first', async () => {
      const onError = vi.fn();
      const app = express();
      app.use(express.json());
      app.post('/webhooks', make({ onError }).node);
      const { url } = await serve(app);
      expect((await deliver(url)).status).toBe(500);
      expect(onError.mock.calls[0]![0]).toMatchObject({ reason: 'body_not_raw', message: expect.stringMatching(/express\.json/) });
    });
  });

  it('works in Fastify with a Buffer body parser and reply.hijack()', async () => {
    const handled = vi.fn();
    const webhooks = make({ on: { 'post.published': handled } });
    const app = Fastify();
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    app.all('/webhooks', (request, reply) => {
      reply.hijack();
      return webhooks.node(request, reply.raw);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/webhooks`;
      expect((await deliver(url)).status).toBe(204);
      expect((await deliver(url)).status).toBe(204);
      const forged = await deliver(url, publishedBody, { secret: 'whsec_forged' });
      expect([forged.status, await forged.text()]).toEqual([400, 'no_matching_signature']);
      expect(handled).toHaveBeenCalledOnce();
    } finally {
      await app.close();
    }
  });
});

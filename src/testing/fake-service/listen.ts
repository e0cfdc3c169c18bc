/**
 * Node-only: serves the fake's Web-standard handler on a real port of 127.0.0.1. Loaded lazily by
 * `fake.listen()` with `await import('node:http')`, so the testing entry itself runs in any runtime.
 *
 * Bodies stream both ways with backpressure: a 256 MB upload flows through the handler chunk by chunk.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ConnectionResetFault } from './faults.js';

/** A fake service listening on 127.0.0.1. */
export interface ListeningFakeService {
  /** `http://127.0.0.1:<port>` plus the base URL's path: give this to the SDK as its base URL. */
  url: string;
  /** The port on 127.0.0.1. */
  port: number;
  /** Stops accepting connections and drops the open ones (hanging requests included). */
  close(): Promise<void>;
}

type Handler = (request: Request) => Promise<Response>;

/** Starts the server; `basePath` is the base URL's path (`''` or `/v1`). */
export async function listenOnLoopback(handler: Handler, port: number, basePath: string): Promise<ListeningFakeService> {
  const http = await import('node:http');
  const sockets = new Set<Socket>();
  let origin = '';
  const server: Server = http.createServer((req, res) => {
    // Whatever one request does, it never becomes an unhandled rejection that ends the user's test process.
    serve(handler, origin, req, res).catch(() => {
      if (!res.headersSent) plain(res, 500, 'fake service error');
      else res.destroy();
    });
  });
  // CONNECT never reaches the request handler: without this, node:http just drops the socket.
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    socket.end('HTTP/1.1 405 Method Not Allowed\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address !== null ? address.port : port;
  origin = `http://127.0.0.1:${actualPort}`;
  let closed: Promise<void> | undefined;
  return {
    url: `${origin}${basePath}`,
    port: actualPort,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
}

/** The request body as a Web stream that pauses the socket while the handler is not reading. */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on('data', (chunk: Buffer) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        // After a cancel the controller is closed already; late events are then ignored.
        req.on('end', () => ignore(() => controller.close()));
        req.on('error', (error) => ignore(() => controller.error(error)));
        req.pause();
      },
      pull() {
        req.resume();
      },
      cancel() {
        req.removeAllListeners('data');
        req.resume(); // discard the rest so the answer can still be read by the client
      },
    },
    // Byte-counted, so at most ~64 KiB waits between the socket and the handler.
    new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
  );
}

async function serve(handler: Handler, origin: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort(); // the client went away before the answer was complete
  });
  const method = (req.method ?? 'GET').toUpperCase();
  // RFC 9110 §9.3.8 / Fetch "forbidden method": TRACE, TRACK and CONNECT cannot become a Request.
  if (FORBIDDEN_METHODS.has(method)) return plain(res, 405, `${method} is not supported.`, req);
  // Only origin-form targets (`/path?query`): `OPTIONS *` and absolute-form (`GET http://other/`) are refused.
  const target = req.url ?? '/';
  if (!target.startsWith('/')) return plain(res, 400, 'The request target must be a path (origin-form).', req);
  const hasBody = method !== 'GET' && method !== 'HEAD';
  let request: Request;
  try {
    const headers = new Headers();
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
    }
    // Joined, not resolved: `//host/path` is a path here, not a network-path reference to another host.
    request = new Request(new URL(`${origin}${target}`), {
      method,
      headers,
      signal: abort.signal,
      ...(hasBody ? { body: bodyStream(req), duplex: 'half' } : {}),
    } as RequestInit);
  } catch {
    return plain(res, 400, 'The request cannot be read (target, method or headers).', req);
  }

  let response: Response;
  try {
    response = await handler(request);
  } catch (error) {
    // A reset fault drops the TCP connection; an aborted (hanging) request just ends with its socket.
    if (error instanceof ConnectionResetFault || abort.signal.aborted || isAbort(error)) {
      req.socket.destroy();
      return;
    }
    response = new Response('fake service error', { status: 500 });
  }
  if (hasBody && !request.bodyUsed) await request.body?.cancel().catch(() => undefined);

  const out: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    out[key] = value;
  });
  res.writeHead(response.status, out);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await drained(res);
      if (res.destroyed) break;
    }
  } finally {
    reader.releaseLock();
    res.end();
  }
}

const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** A short text answer for a request the fake cannot handle; the request's body is drained, not read. */
function plain(res: ServerResponse, status: number, text: string, req?: IncomingMessage): void {
  req?.resume();
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  res.end(text);
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function ignore(fn: () => void): void {
  try {
    fn();
  } catch {
    // the stream was cancelled or already closed
  }
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

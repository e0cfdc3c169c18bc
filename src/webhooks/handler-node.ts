/**
 * The node:http side of `createWebhookHandler`: reading a delivery from an `IncomingMessage` (or a framework's
 * request that already holds the raw body) and answering through a `ServerResponse`. Typed structurally, with
 * no `node:` import, so this entry stays Web-standards-only and its types need no `@types/node`.
 */
import { checkDeclaredLength, toRawBody, tooLarge, unreadable, type BodySource } from './body.js';
import { reject } from './errors.js';
import type { HeadersRecord } from './signature.js';

/**
 * What `.node()` needs of a request: node:http's `IncomingMessage` (Express's `req`), or an object with the
 * raw body in `body` (Fastify's `request` with a `Buffer` body parser).
 */
export interface NodeWebhookRequest {
  /** The HTTP method. */
  method?: string | undefined;
  /** The request headers (names lowercased, as node:http gives them). */
  headers: HeadersRecord;
  /** A body a framework already read: used when it is raw (a `Buffer`, bytes or a string), refused when parsed. */
  body?: unknown;
  /** True once the stream was read to its end (by someone else, when `body` is not set). */
  readableEnded?: boolean | undefined;
  /** True once the stream was destroyed (the sender went away): it will emit nothing more. */
  destroyed?: boolean | undefined;
  /** Subscribes to the stream's `data`, `end`, `error` and `close` events. */
  on?(event: string, listener: (...args: any[]) => void): unknown;
  /** Unsubscribes. */
  removeListener?(event: string, listener: (...args: any[]) => void): unknown;
  /** Stops the flow of `data` events. */
  pause?(): unknown;
  /** Starts it again: a stream a middleware paused sends no `data` to a new listener until resumed. */
  resume?(): unknown;
}

/** What `.node()` needs of a response: node:http's `ServerResponse` (Express's `res`, Fastify's `reply.raw`). */
export interface NodeWebhookResponse {
  /** The status to send. */
  statusCode: number;
  /** Sets one header. */
  setHeader(name: string, value: string): unknown;
  /** Sends the body and ends the response. */
  end(body?: string): unknown;
  /** True when something else already began the answer. */
  headersSent?: boolean | undefined;
}

/**
 * The body of a Node request, read up to `limit`; `leftUnread` tells whether its stream was left unread (then the
 * connection is closed after the answer).
 */
export function nodeBody(req: NodeWebhookRequest, limit: number): BodySource & { leftUnread(): boolean } {
  let readToEnd = false;
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return {
    check() {
      if (req.body !== undefined) {
        // A body parser ran first: raw bytes or text verify, a parsed object cannot.
        try {
          toRawBody(req.body);
        } catch {
          reject('body_not_raw', 'req.body was parsed by a body parser: mount the handler before express.json(), or use express.raw()');
        }
      } else if (typeof req.on !== 'function' || req.readableEnded || req.destroyed) {
        unreadable(); // ended or destroyed: no `end` nor `close` would come, and the answer would never go
      }
    },
    async read() {
      if (req.body !== undefined) {
        const body = toRawBody(req.body);
        const size = typeof body === 'string' ? new TextEncoder().encode(body).byteLength : body.byteLength;
        if (size > limit) tooLarge(limit);
        return body;
      }
      checkDeclaredLength(header('content-length'), limit);
      const body = await readStream(req, limit);
      readToEnd = true;
      return body;
    },
    discard() {
      // Nothing to cancel on a Node stream we never subscribed to: the answer closes the connection instead.
    },
    leftUnread() {
      if (req.body !== undefined || readToEnd) return false;
      const length = header('content-length');
      return header('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
    },
  };
}

/**
 * Reads the stream to its end, at most `limit` bytes. Listeners rather than `for await`: leaving a `for await`
 * early destroys the request, and with it the socket the 400 must go out on.
 */
function readStream(req: NodeWebhookRequest, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, fail) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const settle = (finish: () => void) => {
      for (const [event, listener] of listeners) req.removeListener?.(event, listener);
      finish();
    };
    const listeners: [string, (...args: any[]) => void][] = [
      [
        'data',
        (chunk: Uint8Array | string) => {
          const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
          size += bytes.byteLength;
          if (size > limit) {
            req.pause?.();
            settle(() => fail(thrown(() => tooLarge(limit))));
          } else {
            chunks.push(bytes);
          }
        },
      ],
      ['end', () => settle(() => resolve(new Blob(chunks as Uint8Array<ArrayBuffer>[]).arrayBuffer().then((b) => new Uint8Array(b))))],
      ['error', () => settle(() => fail(thrown(unreadable)))],
      // Emitted before `end` only when the sender went away mid-body.
      ['close', () => settle(() => fail(thrown(unreadable)))],
    ];
    for (const [event, listener] of listeners) req.on!(event, listener);
    req.resume?.();
  });
}

/** The error `fail` throws, as a value (to reject a promise from an event listener). */
function thrown(fail: () => never): unknown {
  try {
    return fail();
  } catch (error) {
    return error;
  }
}

/** Sends an answer, unless something else already began one. */
export function writeNodeAnswer(res: NodeWebhookResponse, status: number, headers: Record<string, string>, body: string | null): void {
  if (res.headersSent === true) return;
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (body === null) res.end();
  else res.end(body);
}

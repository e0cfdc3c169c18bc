/**
 * The raw body: the only input the signature can be checked against (service spec §5 2). Given by the user, or read
 * by the SDK itself (`verifyWebhookRequest`, `createWebhookHandler`) with a cap, so that a hostile sender cannot
 * fill memory before the signature is known to be bad.
 */
import { readStream } from '../core/buffer-response.js';
import { integerOption } from '../core/invalid-option.js';
import { reject } from './errors.js';

/**
 * The request body exactly as received. A string is hashed as its UTF-8 bytes, so the same bytes verify
 * the same whichever form you pass.
 *
 * @example
 * app.post('/webhooks', express.raw({ type: 'application/json' }), (req) => verifyWebhook({ body: req.body, … }))
 * verifyWebhook({ body: await request.text(), … })
 */
export type WebhookBody = string | Uint8Array | ArrayBuffer;

/** Normalizes the body to a string or bytes, rejecting what cannot be the raw body. */
export function toRawBody(body: unknown): string | Uint8Array {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  // toString rather than instanceof: an ArrayBuffer from another realm (a vm context, a worker) counts too.
  if (Object.prototype.toString.call(body) === '[object ArrayBuffer]') return new Uint8Array(body as ArrayBuffer);
  // The signature covers the bytes sent; re-serializing a parsed object does not reproduce them.
  const kind = body == null ? 'missing' : `a ${typeof body === 'object' ? 'parsed object' : typeof body}`;
  return reject('body_not_raw', `Body is ${kind}; pass the raw body: express.raw(), request.text()`);
}

/**
 * Default cap, in bytes, on a webhook body that the SDK reads itself (`verifyWebhookRequest`,
 * `createWebhookHandler`). Event bodies are a few hundred bytes; the spec gives no size limit (§8), so the cap
 * is generous, and it keeps a hostile sender from filling memory before the signature is known to be wrong.
 *
 * @example
 * await verifyWebhookRequest(request, secret, { maxBodyBytes: 4 * DEFAULT_WEBHOOK_MAX_BODY_BYTES })
 */
export const DEFAULT_WEBHOOK_MAX_BODY_BYTES = 1_048_576; // 1 MiB, a literal so that bundlers drop it when unused

/**
 * Where the body comes from when the SDK reads it: a Fetch Request (`requestBody`), a Node request
 * (handler-node.ts). Checked for a configuration mistake before anything else, read only once the header passed,
 * discarded when it is not read.
 */
export interface BodySource {
  /** Throws `body_not_raw` when the body cannot be read raw (already read, parsed, not a request). Reads nothing. */
  check(): void;
  /** The exact body, at most the cap (`body_too_large` past it). */
  read(): Promise<string | Uint8Array>;
  /** Drops a body that will not be read, so the runtime does not buffer it. */
  discard(): void;
}

/** The cap in force: `maxBodyBytes` when given (a whole number of bytes ≥ 0, the one option check), else the default. */
export function bodyLimit(maxBodyBytes: number | undefined): number {
  return integerOption(maxBodyBytes, 'maxBodyBytes', DEFAULT_WEBHOOK_MAX_BODY_BYTES, 0, Number.MAX_SAFE_INTEGER);
}

export function tooLarge(limit: number): never {
  reject('body_too_large', `Body is over maxBodyBytes (${limit} bytes); the rest was not read`);
}

export function unreadable(): never {
  reject('body_not_raw', 'Body unreadable or already read: verify before request.json()');
}

/** A `Content-Length` over the cap is refused before a byte is read (a lying one is caught while counting). */
export function checkDeclaredLength(contentLength: unknown, limit: number): void {
  if (typeof contentLength === 'string' && /^\d+$/.test(contentLength) && Number(contentLength) > limit) tooLarge(limit);
}

/** A Fetch Request's body as a `BodySource`, read up to `maxBodyBytes` (checked by `check`). */
export function requestBody(request: Request, maxBodyBytes: number | undefined): BodySource {
  let limit = 0;
  return {
    check() {
      limit = bodyLimit(maxBodyBytes);
      if (typeof request?.arrayBuffer !== 'function' || request.bodyUsed) unreadable(); // not a Request, or read already
    },
    // The exact bytes, not `text()`: that would drop a BOM and replace invalid UTF-8. Past the cap the stream is
    // cancelled, the rest never read.
    async read() {
      checkDeclaredLength(request.headers.get('content-length'), limit);
      let bytes: Uint8Array | undefined;
      try {
        // getReader() throws when another reader holds the body; a read fails when the sender went away mid-body.
        bytes = request.body === null ? new Uint8Array() : await readStream(request.body, limit);
      } catch {
        unreadable();
      }
      return bytes ?? tooLarge(limit);
    },
    discard() {
      if (request.body !== null && !request.bodyUsed && !request.body.locked) request.body.cancel().catch(() => undefined);
    },
  };
}

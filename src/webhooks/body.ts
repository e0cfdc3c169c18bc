/** The raw body: the only input the signature can be checked against (service spec §5 2). */
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
  const kind = body == null ? 'missing' : typeof body === 'object' ? 'a parsed object' : `a ${typeof body}`;
  return reject('body_not_raw', `Body is ${kind}; pass the raw body: express.raw(), request.text()`);
}

const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Text of the body; invalid UTF-8 is refused rather than replaced, like a JSON parser would. */
export function bodyText(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : utf8.decode(body);
}

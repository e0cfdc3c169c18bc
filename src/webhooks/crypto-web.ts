/**
 * HMAC backend on Web Crypto (`crypto.subtle`): browsers, Deno, Bun, Cloudflare Workers, Vercel Edge.
 *
 * Comparison: we compute the MAC with `sign` and compare it with each `v1` by a hand-written XOR-accumulate
 * loop (`equalsHex`; Web Crypto has no timingSafeEqual), rather than calling `subtle.verify` per entry. Both
 * are constant-time, but `verify` recomputes the HMAC for every entry × secret pair and needs the hex decoded
 * first, while `sign` costs one HMAC per secret whatever the header holds; `signWebhook` needs `sign` anyway.
 */
import type { HmacBackend } from './backend.js';
import { equalsHex } from './hex.js';

const encoder = /* @__PURE__ */ new TextEncoder();

/** Imported keys by secret: importing costs about as much as the HMAC itself. Bounded, oldest out first. */
const keys = new Map<string, Promise<CryptoKey>>();
const MAX_KEYS = 16;

function keyFor(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (key === undefined) {
    if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value!);
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    keys.set(secret, key);
    key.catch(() => keys.delete(secret)); // never cache a failure
  }
  return key;
}

function signedBytes(prefix: string, body: string | Uint8Array): Uint8Array {
  if (typeof body === 'string') return encoder.encode(prefix + body);
  const head = encoder.encode(prefix);
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head);
  bytes.set(body, head.length);
  return bytes;
}

export const webCrypto: HmacBackend = {
  async hmac(secret, prefix, body) {
    const key = await keyFor(secret);
    return new Uint8Array(await crypto.subtle.sign('HMAC', key, signedBytes(prefix, body) as Uint8Array<ArrayBuffer>));
  },
  equal: equalsHex,
};

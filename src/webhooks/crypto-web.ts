/**
 * HMAC backend on Web Crypto (`crypto.subtle`): browsers, Deno, Bun, Cloudflare Workers, Vercel Edge.
 *
 * Comparison: we compute the MAC with `sign` and compare it with each `v1` by a hand-written XOR-accumulate
 * loop (`equalsHex`; Web Crypto has no timingSafeEqual), rather than calling `subtle.verify` per entry. Both
 * are constant-time, but `verify` recomputes the HMAC for every entry × secret pair and needs the hex decoded
 * first, while `sign` costs one HMAC per secret whatever the header holds; `signWebhook` needs `sign` anyway.
 */
import { equalsHex, isPending, type HmacBackend } from './signature.js';

const encoder = /* @__PURE__ */ new TextEncoder();

/**
 * Imported keys by secret: importing costs about as much as the HMAC itself. An entry holds the import's
 * promise, then the key itself, so that a known secret's HMAC starts synchronously. Bounded, oldest out
 * first; a failed import is not kept.
 */
const keys = new Map<string, CryptoKey | Promise<CryptoKey>>();
const MAX_KEYS = 16;

function signedBytes(prefix: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return encoder.encode(prefix + body);
  const head = encoder.encode(prefix);
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head);
  bytes.set(body, head.length);
  return bytes;
}

export const webCrypto: HmacBackend = {
  hmac(secret, prefix, body) {
    const data = signedBytes(prefix, body);
    let key = keys.get(secret);
    if (key === undefined) {
      if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value!);
      keys.set(secret, (key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])));
      key.then(
        (imported) => keys.has(secret) && keys.set(secret, imported), // not brought back once evicted
        () => keys.delete(secret), // the caller gets the error
      );
    }
    // With the key at hand the HMAC is under way before this returns: the caller parses the JSON meanwhile.
    if (!isPending(key)) return crypto.subtle.sign('HMAC', key, data);
    return key.then((imported) => crypto.subtle.sign('HMAC', imported, data));
  },
  equal: equalsHex,
};

/** Node-only: HMAC backend on `node:crypto`, synchronous and the fastest there is in Node. */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HmacBackend } from './backend.js';

export const nodeCrypto: HmacBackend = {
  hmac(secret, prefix, body) {
    const hmac = createHmac('sha256', secret);
    if (typeof body === 'string') return hmac.update(prefix + body).digest();
    return hmac.update(prefix).update(body).digest();
  },
  equal(expected, receivedHex) {
    // receivedHex is 64 checked hex characters, so the decoded length always matches.
    return timingSafeEqual(expected, Buffer.from(receivedHex, 'hex'));
  },
};

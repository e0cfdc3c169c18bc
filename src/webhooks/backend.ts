/** The one thing that differs between runtimes: how the HMAC is computed and compared. */

export interface HmacBackend {
  /**
   * HMAC-SHA256 keyed with the secret's UTF-8 bytes over `prefix` then `body` (a string counts as its
   * UTF-8 bytes). Synchronous where the runtime allows it (node:crypto), so the fast path stays fast; a
   * promise (Web Crypto) is already under way when returned, so the caller can parse the JSON meanwhile.
   */
  hmac(secret: string, prefix: string, body: string | Uint8Array): Uint8Array | Promise<ArrayBuffer>;
  /** Constant-time equality of a MAC with a received `v1` value (64 lowercase hex characters, checked). */
  equal(expected: Uint8Array | ArrayBuffer, receivedHex: string): boolean;
}

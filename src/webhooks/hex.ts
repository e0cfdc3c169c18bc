/** Lowercase hex for 32-byte HMAC-SHA256 values, without `Buffer` (Web standards only). */

/** Value of one lowercase hex digit, or -1 (uppercase is refused: the spec says lowercase, §5 3). */
function nibble(code: number): number {
  return code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : -1;
}

/**
 * Decodes exactly 64 lowercase hex characters to 32 bytes, or returns undefined. It runs on the sender's
 * own value, never on the secret MAC, so its early exits leak nothing.
 */
export function decodeHex32(hex: string): Uint8Array | undefined {
  if (hex.length !== 64) return undefined;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    const high = nibble(hex.charCodeAt(2 * i));
    const low = nibble(hex.charCodeAt(2 * i + 1));
    if ((high | low) < 0) return undefined;
    bytes[i] = (high << 4) | low;
  }
  return bytes;
}

/** Lowercase hex of any bytes. */
export function encodeHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += (byte < 16 ? '0' : '') + byte.toString(16);
  return hex;
}

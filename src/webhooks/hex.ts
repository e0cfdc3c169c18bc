/** Lowercase hex for HMAC-SHA256 values, without `Buffer` (Web standards only). */

/** Lowercase hex of any bytes (for `signWebhook`). */
export function encodeHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += (byte < 16 ? '0' : '') + byte.toString(16);
  return hex;
}

/** Char code of the lowercase hex digit of `nibble` (0–15), without a branch on the (secret) value. */
function hexCode(nibble: number): number {
  return 48 + nibble + (((9 - nibble) >> 31) & 39); // 0–9 → '0'–'9', 10–15 → 'a'–'f'
}

/**
 * Constant-time comparison of a MAC (Web Crypto's ArrayBuffer) with a received lowercase hex string, decoding
 * nothing: each byte of the MAC is turned into its two expected char codes and XOR-accumulated, never an
 * early exit.
 */
export function equalsHex(expected: Uint8Array | ArrayBuffer, hex: string): boolean {
  const mac = new Uint8Array(expected);
  if (hex.length !== mac.length * 2) return false; // lengths are public (always 64)
  let difference = 0;
  for (let i = 0; i < mac.length; i++) {
    const byte = mac[i]!;
    difference |= (hexCode(byte >> 4) ^ hex.charCodeAt(2 * i)) | (hexCode(byte & 15) ^ hex.charCodeAt(2 * i + 1));
  }
  return difference === 0;
}

/** Parses `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]` (service spec §5 "Webhook signature" 1). */
import { MAX_SIGNATURE_HEADER_LENGTH, MAX_SIGNATURES } from './constants.js';
import { reject } from './errors.js';
import { decodeHex32 } from './hex.js';

export interface ParsedSignature {
  /** The `t` value as written: the signed string starts with these exact characters. */
  readonly timestampText: string;
  readonly timestamp: number;
  /** Decoded `v1` values (32 bytes each), at most `MAX_SIGNATURES`. */
  readonly signatures: readonly Uint8Array[];
}

function malformed(problem: string): never {
  return reject('malformed_signature', `X-Service-Signature: ${problem}; expected t=<seconds>,v1=<64 lowercase hex>`);
}

/**
 * Strict on what matters (one integer `t`, well-formed `v1`), tolerant of spaces around `,` and `=`, and
 * silent about schemes it does not know (`v0=`), so the service can add one without breaking receivers.
 */
export function parseSignatureHeader(header: string): ParsedSignature {
  // Checked first so that a hostile header (say 1,000 entries) costs no parsing and no HMAC.
  if (header.length > MAX_SIGNATURE_HEADER_LENGTH) {
    malformed(`over ${MAX_SIGNATURE_HEADER_LENGTH} characters`);
  }
  let timestampText: string | undefined;
  const signatures: Uint8Array[] = [];
  const entries = header.split(',');
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const equals = entry.indexOf('=');
    if (equals === -1) malformed('an entry has no =');
    const key = entry.slice(0, equals).trim();
    const value = entry.slice(equals + 1).trim();
    if (key === 't') {
      if (timestampText !== undefined) malformed('t appears twice');
      if (!/^\d{1,15}$/.test(value)) malformed('t is not an integer');
      timestampText = value;
    } else if (key === 'v1') {
      const bytes = decodeHex32(value);
      if (bytes === undefined) malformed('v1 is not 64 lowercase hex');
      if (signatures.length < MAX_SIGNATURES) signatures.push(bytes);
    }
  }
  if (timestampText === undefined) malformed('no t');
  if (signatures.length === 0) malformed('no v1');
  return { timestampText, timestamp: Number(timestampText), signatures };
}

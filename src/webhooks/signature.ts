/**
 * The webhook signature scheme (service spec §5 "Webhook signature"): the `X-Service-Signature` header, read from
 * whatever the framework hands over and parsed; the secrets it is keyed with; the HMAC contract each runtime
 * fills (crypto-web.ts, crypto-node.ts); lowercase hex, compared in constant time.
 */
import { isRecord } from '../core/is-record.js';
import { reject } from './errors.js';

/**
 * Name of the header that carries the signature, lowercased as Fetch `Headers` and Node report it.
 *
 * @example
 * const signature = request.headers.get(WEBHOOK_SIGNATURE_HEADER) // 't=1700000000,v1=5f…'
 */
export const WEBHOOK_SIGNATURE_HEADER = 'x-service-signature';

/** A longer header is rejected before any HMAC is computed, so a hostile header costs nothing. */
export const MAX_SIGNATURE_HEADER_LENGTH = 4096;

/** Only this many `v1` entries are compared (rotation needs two); later ones are ignored. */
export const MAX_SIGNATURES = 8;

// Parsing `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]` (service spec §5 "Webhook signature" 1).

/** Named after the header's entries (`t` is read as a number where it is compared: `Number(t)`). */
export interface ParsedSignature {
  /** The `t` value as written: the signed string starts with these exact characters. */
  readonly t: string;
  /** `v1` values, each 64 lowercase hex characters; at most `MAX_SIGNATURES`. */
  readonly v1: readonly string[];
}

const DIGITS = /^\d{1,15}$/;
// Lowercase only (spec §5 3); the exact length of a SHA-256 MAC.
const HEX64 = /^[\da-f]{64}$/;

/** Throws `malformed_signature`: what is wrong with the header, then the shape it must have. */
export function malformed(problem: string): never {
  reject('malformed_signature', `X-Service-Signature: ${problem}; expected t=<seconds>,v1=<64 lowercase hex>`);
}

/**
 * Strict on what matters (one integer `t`, well-formed `v1`), tolerant of spaces around `,` and `=`, and
 * silent about schemes it does not know (`v0=`), so the service can add one without breaking receivers.
 * One loop for every shape, with indexOf (split and trim of copies cost 2.5x as much) and no hex decoding:
 * this runs on every delivery, and a fast path for the service's own shape saved 50 ns of a 5 µs verification.
 */
export function parseSignatureHeader(header: string): ParsedSignature {
  // Checked first so that a hostile header (say 1,000 entries) costs no parsing and no HMAC.
  if (header.length > MAX_SIGNATURE_HEADER_LENGTH) malformed(`over ${MAX_SIGNATURE_HEADER_LENGTH} characters`);
  let timestampText: string | undefined;
  const signatures: string[] = [];
  for (let start = 0; start <= header.length; ) {
    let end = header.indexOf(',', start);
    if (end < 0) end = header.length;
    const equals = header.indexOf('=', start);
    if (equals < 0 || equals > end) malformed('an entry has no =');
    const key = header.slice(start, equals).trim();
    const value = header.slice(equals + 1, end).trim();
    if (key === 't') {
      if (timestampText !== undefined) malformed('t twice');
      if (!DIGITS.test(value)) malformed('bad t');
      timestampText = value;
    } else if (key === 'v1') {
      if (!HEX64.test(value)) malformed('bad v1');
      if (signatures.length < MAX_SIGNATURES) signatures.push(value);
    }
    start = end + 1;
  }
  if (timestampText === undefined) malformed('no t');
  if (!signatures.length) malformed('no v1');
  return { t: timestampText, v1: signatures };
}

// Reading the header from whatever the user's framework hands over.

/** Anything with a case-insensitive `get(name)`: Fetch `Headers`, Hono's and undici's headers. */
export interface HeadersGetter {
  /** The header's value, or `null`/`undefined` when absent. */
  get(name: string): string | null | undefined;
}

/** A plain headers object: Node's `IncomingHttpHeaders` (array values too), or your own, keys in any case. */
export type HeadersRecord = Readonly<Record<string, string | readonly string[] | number | null | undefined>>;

/**
 * The `X-Service-Signature` value itself, or a headers object to read it from.
 *
 * @example
 * verifyWebhook({ body, secret, signature: req.headers })                         // Express / node:http
 * verifyWebhook({ body, secret, signature: request.headers })                     // Fetch Request
 * verifyWebhook({ body, secret, signature: req.get('X-Service-Signature') })      // the value
 */
export type WebhookSignature = string | readonly string[] | HeadersGetter | HeadersRecord | null | undefined;

/** The header's value, or undefined when it is absent or blank. */
export function readSignatureHeader(source: unknown): string | undefined {
  let value = source;
  if (isRecord(source)) {
    value =
      typeof source.get === 'function'
        ? (source as unknown as HeadersGetter).get(WEBHOOK_SIGNATURE_HEADER)
        : // Node lowercases names; a hand-made object may not.
          (source[WEBHOOK_SIGNATURE_HEADER] ??
          source[Object.keys(source).find((name) => name.toLowerCase() === WEBHOOK_SIGNATURE_HEADER) ?? '']);
  }
  // Node joins a repeated header with ", "; joining an array the same way gives one answer per wire message.
  if (Array.isArray(value)) value = value.join(', ');
  if (value == null) return undefined;
  if (typeof value !== 'string') malformed('not a string');
  return value.trim() ? value : undefined;
}

// The secrets, checked before anything else: a configuration mistake must say so, not look like an attack.

/**
 * One webhook secret, or several while you rotate it: a delivery verifies if any one of them matches.
 *
 * @example
 * secret: [process.env.POSTSCHED_WEBHOOK_SECRET_NEW!, process.env.POSTSCHED_WEBHOOK_SECRET_OLD!]
 */
export type WebhookSecret = string | readonly string[];

/** The secrets as a list. Messages describe the problem, never the value. */
export function toSecretList(secret: unknown): readonly string[] {
  // An empty list has the fix of an empty secret: it is checked as one.
  const list: readonly unknown[] = Array.isArray(secret) ? (secret.length ? secret : ['']) : [secret];
  for (const item of list) {
    const trimmed = typeof item === 'string' && item.trim(); // false when not a string, '' when blank
    if (!trimmed) {
      reject('invalid_secret', `Secret is ${trimmed === '' ? 'empty' : 'not a string'}: pass the endpoint's signing secret from the dashboard; is POSTSCHED_WEBHOOK_SECRET set?`);
    }
    if (trimmed !== item) reject('invalid_secret', 'Secret is padded with whitespace: trim it');
  }
  return list as readonly string[];
}

// The one thing that differs between runtimes: how the HMAC is computed and compared.

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

/**
 * Whether a backend's answer (a MAC, an imported key) is still under way. Told by `then`, not `instanceof
 * Promise`: where crypto.subtle comes from another realm (edge-runtime's VM context) its promises are not this
 * realm's Promise.
 */
export function isPending<T>(value: T): value is Extract<T, PromiseLike<unknown>> {
  return typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Constant-time comparison of a MAC (Web Crypto's ArrayBuffer) with a received lowercase hex string, decoding
 * nothing: each hex digit the MAC's nibble should have (its char code, computed without a branch on the secret
 * value: 0–9 → '0'–'9', 10–15 → 'a'–'f') is XOR-accumulated with the one received, never an early exit. Lengths
 * are public (always 64): a length that differs makes the result false, like any differing digit.
 */
export function equalsHex(expected: Uint8Array | ArrayBuffer, hex: string): boolean {
  const mac = new Uint8Array(expected);
  let difference = hex.length ^ (mac.length * 2);
  for (let i = 0; i < hex.length; i++) {
    const nibble = (mac[i >> 1]! >> ((~i & 1) * 4)) & 15; // high nibble at even i; past the MAC's end, 0
    difference |= (48 + nibble + (((9 - nibble) >> 31) & 39)) ^ hex.charCodeAt(i);
  }
  return difference === 0;
}

/**
 * The verification steps, shared by both runtimes; the HMAC backend is passed in by the entry file.
 * Order: configuration mistakes first (secret, body), then the header, the clock, the HMAC, the JSON.
 */
import { PostSchedError } from '../base-error.js';
import type { HmacBackend } from './backend.js';
import { bodyText, toRawBody, type WebhookBody } from './body.js';
import { DEFAULT_WEBHOOK_TOLERANCE_SECONDS } from './constants.js';
import { reject } from './errors.js';
import { toWebhookEvent, type WebhookEvent } from './event.js';
import { readSignatureHeader, type WebhookSignature } from './headers.js';
import { encodeHex } from './hex.js';
import { parseSignatureHeader } from './parse-signature.js';
import { toSecretList, type WebhookSecret } from './secret.js';

/** Options of `verifyWebhookRequest` (and of `verifyWebhook`, beside body, signature and secret). */
export interface VerifyWebhookClockOptions {
  /**
   * How far, in seconds, the signature timestamp may be from now, in the past or in the future. Default 300.
   * Why both ways: a future timestamp would let a captured delivery be replayed later.
   */
  toleranceSeconds?: number | undefined;
  /** The current time (a `Date` or milliseconds as from `Date.now()`); for tests and replays. Default: now. */
  now?: Date | number | undefined;
}

/** Input of `verifyWebhook`. */
export interface VerifyWebhookOptions extends VerifyWebhookClockOptions {
  /** The raw request body, exactly as received. */
  body: WebhookBody;
  /** The `X-Service-Signature` value, or the request's headers. */
  signature: WebhookSignature;
  /** The endpoint's webhook secret, or several during a rotation. */
  secret: WebhookSecret;
}

/** Input of `signWebhook`. */
export interface SignWebhookOptions {
  /** The body to sign, as it will be sent. */
  body: WebhookBody;
  /** The webhook secret. */
  secret: string;
  /** Unix time in seconds, or a `Date`. Default: now. */
  timestamp?: number | Date | undefined;
}

function seconds(time: Date | number | undefined, name: string): number {
  const ms = time === undefined ? Date.now() : typeof time === 'number' ? time : time.getTime();
  if (!Number.isFinite(ms)) throw new PostSchedError(`Invalid ${name}`);
  return Math.floor(ms / 1000);
}

function checkClock(timestamp: number, options: VerifyWebhookClockOptions): void {
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (!(tolerance >= 0 && tolerance < Infinity)) {
    throw new PostSchedError('toleranceSeconds must be a finite number ≥ 0');
  }
  const age = seconds(options.now, 'now') - timestamp;
  if (age > tolerance) {
    reject('timestamp_too_old', `Timestamp ${age}s old, over ${tolerance}s tolerance: a replay, or a slow clock`);
  }
  if (-age > tolerance) {
    reject('timestamp_in_future', `Timestamp ${-age}s ahead, over ${tolerance}s tolerance: check the clock`);
  }
}

/** `verifyWebhook` with a given HMAC backend. */
export async function verifyWith(backend: HmacBackend, options: VerifyWebhookOptions): Promise<WebhookEvent> {
  const secrets = toSecretList(options.secret);
  const body = toRawBody(options.body);
  const header = readSignatureHeader(options.signature);
  if (header === undefined) {
    reject('missing_signature', 'X-Service-Signature header is missing');
  }
  const { timestampText, timestamp, signatures } = parseSignatureHeader(header);
  checkClock(timestamp, options);
  // Signed string: "<t>.<raw body>" (spec §5 "Webhook signature" 2); one HMAC per secret, then cheap compares.
  const prefix = `${timestampText}.`;
  const macs = secrets.map((secret) => backend.hmac(secret, prefix, body));
  let parsed: unknown = UNPARSED;
  let expected: readonly Uint8Array[];
  if (macs.every((mac) => mac instanceof Uint8Array)) {
    expected = macs as Uint8Array[];
  } else {
    // Web Crypto hashes off the main thread: parse meanwhile. The result is used only once a signature
    // matches, and a parse failure is reported only then, so the answer is the same as in sequence.
    parsed = parseJson(body);
    expected = await Promise.all(macs);
  }
  if (!expected.some((mac) => signatures.some((received) => backend.equal(mac, received)))) {
    reject('no_matching_signature', 'No v1 signature matches: check the secret; pass the raw body');
  }
  if (parsed === UNPARSED) parsed = parseJson(body);
  // No `cause`: the engine's message quotes the body.
  if (parsed === INVALID) reject('invalid_json', 'Signed body is not UTF-8 JSON');
  return toWebhookEvent(parsed);
}

const UNPARSED = Symbol();
const INVALID = Symbol();

function parseJson(body: string | Uint8Array): unknown {
  try {
    return JSON.parse(bodyText(body));
  } catch {
    return INVALID;
  }
}

/** `verifyWebhookRequest` with a given HMAC backend. */
export async function verifyRequestWith(
  backend: HmacBackend,
  request: Request,
  secret: WebhookSecret,
  options: VerifyWebhookClockOptions = {},
): Promise<WebhookEvent> {
  toSecretList(secret); // a configuration mistake is reported before the body is read
  let body: ArrayBuffer;
  try {
    // The exact bytes: text() would drop a BOM and replace invalid UTF-8. Throws if already read (bodyUsed),
    // or if this is not a Fetch Request (an Express req: use verifyWebhook with express.raw()).
    body = await request.arrayBuffer();
  } catch {
    reject('body_not_raw', 'Body unreadable or already read: verify before request.json()');
  }
  return verifyWith(backend, { ...options, body, signature: request.headers, secret });
}

/** `signWebhook` with a given HMAC backend. */
export async function signWith(backend: HmacBackend, options: SignWebhookOptions): Promise<string> {
  const [secret] = toSecretList(options.secret) as [string];
  const body = toRawBody(options.body);
  const timestamp = options.timestamp;
  const t = typeof timestamp === 'number' ? timestamp : seconds(timestamp, 'timestamp');
  if (!Number.isSafeInteger(t) || t < 0) {
    throw new PostSchedError('timestamp must be whole seconds ≥ 0');
  }
  return `t=${t},v1=${encodeHex(await backend.hmac(secret, `${t}.`, body))}`;
}

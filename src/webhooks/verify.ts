/**
 * Verification: the options, the one verify sequence (`verifyDelivery`) behind `verifyWebhook`,
 * `verifyWebhookRequest` and `createWebhookHandler`, and `signWebhook`. Shared by both runtimes: the entry file
 * passes the HMAC backend in.
 */
import { toHex } from '../core/bytes.js';
import { integerOption, invalidOption } from '../core/invalid-option.js';
import { requestBody, toRawBody, type BodySource, type WebhookBody } from './body.js';
import { reject } from './errors.js';
import { toWebhookEvent, type WebhookEvent } from './event.js';
import {
  isPending,
  parseSignatureHeader,
  readSignatureHeader,
  toSecretList,
  type HmacBackend,
  type ParsedSignature,
  type WebhookSecret,
  type WebhookSignature,
} from './signature.js';

/**
 * Default tolerance, in seconds, between the signature timestamp and the receiver's clock, both ways.
 * The spec does not give one (§5 "Webhook signature" 5); see assumptions.md "Webhook timestamp tolerance".
 *
 * @example
 * await verifyWebhook({ body, signature, secret, toleranceSeconds: DEFAULT_WEBHOOK_TOLERANCE_SECONDS * 2 })
 */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

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

/** Options of `verifyWebhookRequest`: the clock options and the body cap. */
export interface VerifyWebhookRequestOptions extends VerifyWebhookClockOptions {
  /**
   * The largest body read, in bytes (default 1 MiB, `DEFAULT_WEBHOOK_MAX_BODY_BYTES`). A longer body, or a
   * `Content-Length` over it, is rejected with `body_too_large` and the rest is not read. The header and the
   * timestamp are checked before any byte is read, so an unsigned or stale delivery costs no body at all.
   */
  maxBodyBytes?: number | undefined;
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

/** Unix seconds of `time` (a Date, or milliseconds), now when undefined; `NaN` for an invalid Date. */
function seconds(time: Date | number | undefined): number {
  return Math.floor(Number(time ?? Date.now()) / 1000); // a Date's number is its getTime()
}

/** `toleranceSeconds`, checked, or its default. */
export function toleranceOf(options: VerifyWebhookClockOptions): number {
  return integerOption(options.toleranceSeconds, 'toleranceSeconds', DEFAULT_WEBHOOK_TOLERANCE_SECONDS, 0, Number.MAX_SAFE_INTEGER);
}

/** The checks that need no body: the header is present and well formed, its timestamp within tolerance. */
function checkSignature(options: VerifyWebhookClockOptions & { readonly signature: unknown }): ParsedSignature {
  const header = readSignatureHeader(options.signature);
  if (header === undefined) reject('missing_signature', 'X-Service-Signature: missing');
  const parsed = parseSignatureHeader(header);
  const tolerance = toleranceOf(options);
  const now = seconds(options.now);
  if (!Number.isFinite(now)) invalidOption('now', 'must be a Date or ms since 1970.');
  const age = now - Number(parsed.t);
  if (age > tolerance) reject('timestamp_too_old', `Timestamp ${age}s old, over ${tolerance}s tolerance: a replay, or a slow clock`);
  if (-age > tolerance) reject('timestamp_in_future', `Timestamp ${-age}s ahead, over ${tolerance}s tolerance: check the clock`);
  return parsed;
}

/** A delivery as the verify sequence takes it: a raw body given by the user, or a `BodySource` the SDK reads. */
export interface Delivery extends VerifyWebhookClockOptions {
  readonly secret: unknown;
  readonly signature: unknown;
  readonly body: unknown;
}

/**
 * The verify sequence, assembled here once for `verifyWebhook`, `verifyWebhookRequest` and the handler:
 * configuration mistakes first (the secret, then the body: given raw, or a source that can still be read), then
 * everything the header decides, and only then the body (read from its source, which is discarded when the header
 * fails), the HMAC against each secret, the JSON. `signed` is told the signature's timestamp once the header passed.
 * With the body given, everything up to the HMAC runs before this returns: a check that fails rejects the promise
 * returned, and the HMAC is under way.
 */
export async function verifyDelivery(backend: HmacBackend, delivery: Delivery, signed?: (timestamp: number) => void): Promise<WebhookEvent> {
  const { body } = delivery;
  const secrets = toSecretList(delivery.secret);
  // Told apart by `check`, which a user's body never has: a Node stream has `read` too, and is body_not_raw.
  const source = typeof (body as Partial<BodySource> | null)?.check === 'function' ? (body as BodySource) : undefined;
  const raw = source ? (source.check(), undefined) : toRawBody(body);
  let header: ParsedSignature;
  try {
    header = checkSignature(delivery);
  } catch (error) {
    source?.discard();
    throw error;
  }
  signed?.(Number(header.t));
  const bytes = raw ?? (await source!.read());
  // Signed string: "<t>.<raw body>" (spec §5 "Webhook signature" 2); one HMAC per secret, then cheap compares.
  const macs = secrets.map((secret) => backend.hmac(secret, `${header.t}.`, bytes));
  // Web Crypto's HMACs are under way off the main thread: parse meanwhile. node:crypto's are done: parse only
  // once a signature matches. Either way a parse failure is reported only after the signature check.
  let parsed = isPending(macs[0]) ? parseJson(bytes) : undefined; // JSON.parse never gives undefined
  const expected = parsed === undefined ? (macs as Uint8Array[]) : await Promise.all(macs);
  if (!expected.some((mac) => header.v1.some((received) => backend.equal(mac, received)))) {
    reject('no_matching_signature', 'Signature does not match the secret: a wrong secret, or the raw body was changed before verification');
  }
  if (parsed === undefined) parsed = parseJson(bytes);
  // No `cause`: the engine's message quotes the body.
  if (parsed === INVALID) reject('invalid_json', 'Signed body is not UTF-8 JSON');
  return toWebhookEvent(parsed);
}

const INVALID = Symbol();
const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body's JSON, or INVALID; invalid UTF-8 is refused rather than replaced, like a JSON parser would. */
function parseJson(body: string | Uint8Array): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : utf8.decode(body));
  } catch {
    return INVALID;
  }
}

/** `verifyWebhookRequest` with a given HMAC backend: the request's body read by the SDK, up to `maxBodyBytes`. */
export function verifyRequestWith(backend: HmacBackend, request: Request, secret: WebhookSecret, options: VerifyWebhookRequestOptions = {}): Promise<WebhookEvent> {
  return verifyDelivery(backend, { ...options, secret, signature: request?.headers, body: requestBody(request, options.maxBodyBytes) });
}

/** `signWebhook` with a given HMAC backend. */
export async function signWith(backend: HmacBackend, options: SignWebhookOptions): Promise<string> {
  const [secret] = toSecretList(options.secret) as [string];
  const body = toRawBody(options.body);
  const timestamp = options.timestamp;
  const t = typeof timestamp === 'number' ? timestamp : seconds(timestamp);
  if (!Number.isSafeInteger(t) || t < 0) invalidOption('timestamp', 'must be a Date or whole Unix seconds ≥ 0.');
  return `t=${t},v1=${toHex(new Uint8Array(await backend.hmac(secret, `${t}.`, body)))}`;
}

/**
 * Reads a delivery's raw body with a cap, for the paths where the SDK reads the body itself: a hostile sender
 * must not fill memory before the signature is known to be bad (issue 12, item 6).
 */
import { integerOption } from '../invalid-option.js';
import { DEFAULT_WEBHOOK_MAX_BODY_BYTES } from './constants.js';
import { readStream } from '../buffer-response.js';
import { reject } from './errors.js';

/** The cap in force: `maxBodyBytes` when given (a whole number of bytes ≥ 0, the one option check), else the default. */
export function bodyLimit(maxBodyBytes: number | undefined): number {
  return integerOption(maxBodyBytes, 'maxBodyBytes', DEFAULT_WEBHOOK_MAX_BODY_BYTES, 0, Number.MAX_SAFE_INTEGER);
}

export function tooLarge(limit: number): never {
  return reject('body_too_large', `Body is over maxBodyBytes (${limit} bytes); the rest was not read`);
}

export function unreadable(): never {
  return reject('body_not_raw', 'Body unreadable or already read: verify before request.json()');
}

/** A `Content-Length` over the cap is refused before a byte is read (a lying one is caught while counting). */
export function checkDeclaredLength(contentLength: unknown, limit: number): void {
  if (typeof contentLength === 'string' && /^\d+$/.test(contentLength) && Number(contentLength) > limit) tooLarge(limit);
}

/** Throws `body_not_raw` unless `request` is a Fetch Request whose body is still unread. */
export function assertUnreadRequest(request: Request): void {
  if (typeof request?.arrayBuffer !== 'function' || request.bodyUsed) unreadable();
}

/**
 * The exact bytes of a Fetch Request's body, at most `limit` of them: past that the stream is cancelled and
 * `body_too_large` thrown. The bytes, not `text()`: that would drop a BOM and replace invalid UTF-8.
 */
export async function readRequestBody(request: Request, limit: number): Promise<Uint8Array> {
  checkDeclaredLength(request.headers.get('content-length'), limit);
  let bytes: Uint8Array | undefined;
  try {
    // getReader() throws when another reader holds the body; a read fails when the sender went away mid-body.
    bytes = request.body === null ? new Uint8Array() : await readStream(request.body, limit);
  } catch {
    unreadable();
  }
  return bytes ?? tooLarge(limit);
}

/** Drops a body that will not be read (a rejected delivery), so the runtime does not buffer it. */
export function discardRequestBody(request: Request): void {
  if (request.body !== null && !request.bodyUsed && !request.body.locked) request.body.cancel().catch(() => undefined);
}

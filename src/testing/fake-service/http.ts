/**
 * Small HTTP helpers shared by the fake's routes: ids, JSON and error answers in the wire format,
 * and the error type a route throws to answer early.
 */
import { readStream } from '../../core/buffer-response.js';
import { toBase64Url } from '../../core/bytes.js';

const encoder = new TextEncoder();

/** A random id with a readable prefix (`post_…`, `req_…`), from Web Crypto. */
export function randomId(prefix: string, bytes = 12): string {
  return `${prefix}_${base64url(crypto.getRandomValues(new Uint8Array(bytes)))}`;
}

/** RFC 4648 §5 base64url without padding. */
export const base64url = toBase64Url;

/** BASE64URL(SHA-256(ASCII(value))), the S256 transform of RFC 7636 §4.2. */
export async function s256(value: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(value))));
}

/** Compares two strings without an early exit, so timing does not tell how much of a secret matched. */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/** A JSON answer. */
export function json(status: number, body: unknown, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set('content-type', 'application/json');
  return new Response(JSON.stringify(body), { status, headers: h });
}

/** The wire contract's error body: `{"error":{"code","message","field"?}}`. */
export function apiError(
  status: number,
  code: string,
  message: string,
  options: { field?: string; headers?: HeadersInit } = {},
): Response {
  const error: Record<string, string> = { code, message };
  if (options.field !== undefined) error.field = options.field;
  return json(status, { error }, options.headers);
}

/**
 * Thrown by a route to answer with an error at once (validation, missing scope, unknown id).
 * It never carries a token or a secret: messages name the parameter, never its value.
 */
export class HttpError extends Error {
  readonly response: Response;
  constructor(response: Response) {
    super(`HTTP ${response.status}`);
    this.response = response;
  }
}

/** Throws a 422 `validation_error` naming the offending field (wire contract). */
export function invalid(field: string, message: string): never {
  throw new HttpError(apiError(422, 'validation_error', `${field}: ${message}`, { field }));
}

/** Throws a 404 `not_found` (wire contract). */
export function notFound(what: string, id: string): never {
  throw new HttpError(apiError(404, 'not_found', `No ${what} with id ${JSON.stringify(id.slice(0, 100))}.`));
}

/** The largest JSON or form body the fake reads (uploads stream and are not held, so they have no limit here). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The body as text, or `undefined` when it is longer than `limit` bytes (reading stops there). */
export async function readBoundedText(request: Request, limit: number): Promise<string | undefined> {
  if (request.body === null) return '';
  const bytes = await readStream(request.body, limit);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}

/** A 413 in the wire format, for a body over `MAX_BODY_BYTES`. */
export function tooLarge(): HttpError {
  return new HttpError(apiError(413, 'payload_too_large', `The body is larger than ${MAX_BODY_BYTES} bytes.`));
}

/** Reads a JSON object body, answering 415 / 413 / 400 / 422 for a wrong content type, a body too large, bad JSON or a non-object. */
export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)) {
    throw new HttpError(
      apiError(415, 'unsupported_media_type', 'Send the body as JSON with content-type: application/json.'),
    );
  }
  const text = await readBoundedText(request, MAX_BODY_BYTES);
  if (text === undefined) throw tooLarge();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(apiError(400, 'invalid_json', 'The request body is not valid JSON.'));
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    // A 400, not a 422: the wire contract's validation_error always names a field, and here there is none.
    throw new HttpError(apiError(400, 'invalid_body', 'The body must be a JSON object.'));
  }
  return body as Record<string, unknown>;
}

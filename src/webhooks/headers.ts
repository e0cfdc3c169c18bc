/** Reads the signature header from whatever the user's framework hands over. */
import { isRecord } from '../is-record.js';
import { WEBHOOK_SIGNATURE_HEADER } from './constants.js';
import { malformed } from './signature.js';

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
    const headers = source as Record<string, unknown> & Partial<HeadersGetter>;
    value =
      typeof headers.get === 'function'
        ? headers.get(WEBHOOK_SIGNATURE_HEADER)
        : // Node lowercases names; a hand-made object may not.
          (headers[WEBHOOK_SIGNATURE_HEADER] ??
          headers[Object.keys(headers).find((name) => name.toLowerCase() === WEBHOOK_SIGNATURE_HEADER) ?? '']);
  }
  // Node joins a repeated header with ", "; joining an array the same way gives one answer per wire message.
  if (Array.isArray(value)) value = value.join(', ');
  if (value == null) return undefined;
  if (typeof value !== 'string') malformed('not a string');
  return value.trim() === '' ? undefined : value;
}

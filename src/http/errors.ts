/**
 * What a failed call throws: ky's errors become the SDK's (errors section of the Assumptions table:
 * the HTTP status picks the class, the body is kept). Nothing from the request (its headers hold the
 * access token) is carried over: only the answer's status, headers and body.
 */
import { responseText } from '../buffer-response.js';
import { makeAPIError, TimeoutError } from '../errors.js';
import type { KyGuards } from './ky.js';
import { retryAfterMs } from './retry.js';

export async function toSDKError(
  error: unknown,
  context: { signal: AbortSignal | undefined; timeoutMs: number; secrets: readonly string[] },
  { isHTTPError, isTimeoutError }: KyGuards,
): Promise<unknown> {
  // Like fetch, an aborted call rejects with the signal's reason (an AbortError unless the caller gave one).
  if (context.signal?.aborted === true) return context.signal.reason;
  if (isHTTPError(error)) {
    const { response } = error;
    const body = parseBody(await responseText(response).catch(() => ''));
    const wait = response.status === 429 ? retryAfterMs(response.headers) : undefined;
    return makeAPIError(response.status, body, response.headers, { secrets: context.secrets, ...(wait === undefined ? {} : { retryAfterMs: wait }) });
  }
  if (isTimeoutError(error)) return new TimeoutError(context.timeoutMs);
  return error;
}

/** JSON when it parses, else the text; `undefined` for an empty body. */
export function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

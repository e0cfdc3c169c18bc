/**
 * The fetch oauth4webapi uses for token requests (its `customFetch` hook): the user's fetch or the global
 * one, a time-out that covers the whole exchange, and the SDK's own ConnectionError / TimeoutError.
 */
import type { CustomFetchOptions } from 'oauth4webapi';
import { bufferResponse } from '../buffer-response.js';
import { ConnectionError, TimeoutError } from '../errors.js';

/** A `fetch`-compatible function: the global fetch, undici's, or a test double. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/**
 * Wraps `fetch` for token requests. The body is read inside the time-out (token answers are a few hundred
 * bytes), so a server that sends headers and then stalls times out too, and a connection dropped mid-body
 * is a ConnectionError rather than a JSON parse error.
 */
export function createTokenFetch(userFetch: FetchLike | undefined, timeoutMs: number) {
  return async (url: string, options: CustomFetchOptions<'POST', URLSearchParams>): Promise<Response> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      // The global is looked up per call so that fetch mocks installed later (msw, nock) are honoured.
      const response = await (userFetch ?? globalThis.fetch)(url, { ...options, signal: controller.signal });
      // An opaque redirect (status 0, browsers) cannot be rebuilt; oauth4webapi rejects it as non-conform.
      if (response.status < 200 || response.status > 599) return response;
      return await bufferResponse(response);
    } catch (error) {
      if (controller.signal.aborted) {
        throw new TimeoutError(
          timeoutMs,
          `The token request to ${url} got no complete answer within ${timeoutMs} ms. ` +
            'Raise `timeoutMs` on the OAuthClient if the service is known to be slow.',
        );
      }
      // `cause` is the runtime's own error (e.g. ECONNREFUSED); the request, which holds the secret, is not attached.
      throw new ConnectionError(`The token request to ${url} failed before an answer arrived: ${describeNetworkError(error)}.`, {
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
  };
}

/** "fetch failed (ECONNREFUSED)": the runtime's message plus the system error code when there is one. */
function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}

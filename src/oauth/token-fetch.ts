/**
 * The fetch oauth4webapi uses for token requests (its `customFetch` hook): the user's fetch or the global
 * one, a time-out that covers the whole exchange, and the SDK's own ConnectionError / TimeoutError.
 */
import type { CustomFetchOptions } from 'oauth4webapi';
import { bufferResponse } from '../core/buffer-response.js';
import { PostSchedError } from '../core/base-error.js';
import { ConnectionError, TimeoutError } from '../core/errors.js';
import { describeNetworkError, sanitizeCause } from '../core/scrub.js';
import { timeBound } from '../core/time-bound.js';
import { traceTokenRequest } from '../core/tracing.js';

/**
 * The most of a token answer that is read: an RFC 6749 §5.1 answer is a few hundred bytes, so anything near this is
 * not a token answer, and a hostile or broken server cannot make the SDK buffer more.
 */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/** A `fetch`-compatible function: the global fetch, undici's, or a test double. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/**
 * Wraps `fetch` for token requests. The body is read inside the time-out, up to `MAX_TOKEN_RESPONSE_BYTES`, so a server that sends headers and then stalls times out too, and a connection dropped mid-body
 * is a ConnectionError rather than a JSON parse error.
 */
export function createTokenFetch(userFetch: FetchLike | undefined, timeoutMs: number) {
  // Published on `postsched:request` (core/tracing.ts), inside the call that needed the token: its grant type, never its form.
  return (url: string, options: CustomFetchOptions<'POST', URLSearchParams>): Promise<Response> =>
    traceTokenRequest(url, options.body.get('grant_type') ?? undefined, (traceHeaders) => tokenRequest(userFetch, timeoutMs, url, traceHeaders === undefined ? options : { ...options, headers: { ...options.headers, ...traceHeaders } }));
}

/** One token request, bounded by `timeoutMs`, its failures the SDK's typed errors. */
async function tokenRequest(userFetch: FetchLike | undefined, timeoutMs: number, url: string, options: CustomFetchOptions<'POST', URLSearchParams>): Promise<Response> {
  const controller = new AbortController();
  try {
    // Bounded as well as signalled: a custom fetch (or its body) that ignores the signal is bounded all the same.
    return await timeBound(
      async () => {
        // The global is looked up per call so that fetch mocks installed later (msw, nock) are honoured.
        const response = await (userFetch ?? globalThis.fetch)(url, { ...options, signal: controller.signal });
        // An opaque redirect (status 0, browsers) cannot be rebuilt; oauth4webapi rejects it as non-conform.
        if (response.status < 200 || response.status > 599) return response;
        return bufferResponse(response, MAX_TOKEN_RESPONSE_BYTES, 'A token answer is a few hundred bytes: check the base URL.');
      },
      timeoutMs,
      () => (controller.abort(), new Error()), // a TimeoutError below
    );
  } catch (error) {
    if (controller.signal.aborted) {
      throw new TimeoutError(
        timeoutMs,
        `The token request to ${url} got no complete answer within ${timeoutMs} ms. ` +
          'Raise `timeoutMs` on the OAuthClient if the service is known to be slow.',
      );
    }
    if (error instanceof PostSchedError) throw error; // a body over the limit
    // Only a sanitized copy of the chain: a custom fetch's error may hold `init`, whose body carries the client
    // secret, the code, the verifier or the refresh token.
    const secrets = secretsOf(options.body);
    const detail = error instanceof Error ? describeNetworkError(error, secrets) : 'the fetch function failed';
    throw new ConnectionError(`The token request to ${url} failed before an answer arrived: ${detail}.`, {
      cause: sanitizeCause(error, 0, secrets),
    });
  }
}

/** The values of the token request's form (client secret, code, verifier, refresh token): never quoted. */
function secretsOf(body: URLSearchParams): Array<string | undefined> {
  return ['client_secret', 'code', 'code_verifier', 'refresh_token'].map((name) => body.get(name) ?? undefined);
}

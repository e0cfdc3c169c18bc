/**
 * What the spans and metrics say about a request, by the stable HTTP client semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/http/http-spans/#http-client-span), and the SDK's own metrics.
 * Only the channels' records go in: a method, a route template, an origin, a URL, a status, an error's class name.
 */
import type { Attributes, Histogram, Meter } from '@opentelemetry/api';

/** Semantic-convention bucket boundaries for HTTP durations, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The metrics the instrumentation records (docs/observability.md lists them). */
export interface Instruments {
  /** `http.client.request.duration`: each wire request the SDK sent and no other instrumentation measured, in s. */
  requestDuration: Histogram;
  /** `postsched.rate_limiter.wait.duration`: each wait the rate limiter made a call sit out before it was sent, in s. */
  rateLimiterWait: Histogram;
  /** `postsched.token.refresh.duration`: each token refresh request (`grant_type=refresh_token`), in s. */
  tokenRefresh: Histogram;
}

export function createInstruments(meter: Meter): Instruments {
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: DURATION_BUCKETS } };
  return {
    requestDuration: meter.createHistogram('http.client.request.duration', { ...seconds, description: 'Duration of HTTP client requests.' }),
    rateLimiterWait: meter.createHistogram('postsched.rate_limiter.wait.duration', {
      ...seconds,
      description: 'How long the rate limiter held a call of the Post Scheduling SDK before sending it.',
    }),
    tokenRefresh: meter.createHistogram('postsched.token.refresh.duration', {
      ...seconds,
      description: 'Duration of the token refresh requests of the Post Scheduling SDK.',
    }),
  };
}

/** `http.request.method`, `url.template`, `server.address`, `server.port` of a call or a request. */
export function routeAttributes(method: string, route: string, origin: string): Attributes {
  const { hostname, port, protocol } = new URL(origin);
  return {
    'http.request.method': method,
    'url.template': route,
    'server.address': hostname,
    'server.port': Number(port || (protocol === 'https:' ? 443 : 80)),
  };
}

/** Query parameters whose values are never shown (OAuth's and signed URLs'), as the conventions ask of `url.full`. */
const SECRET_PARAMETERS = /^(access_token|refresh_token|id_token|token|client_secret|code|code_verifier|state|sig|signature|x-goog-signature|awsaccesskeyid|x-amz-signature)$/i;

/** `url.full` without credentials: user and password, and the values of secret query parameters, are `REDACTED`. */
export function fullUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.username !== '') parsed.username = 'REDACTED';
  if (parsed.password !== '') parsed.password = 'REDACTED';
  for (const name of [...parsed.searchParams.keys()]) if (SECRET_PARAMETERS.test(name)) parsed.searchParams.set(name, 'REDACTED');
  return parsed.href;
}

/**
 * `error.type` of a failure: the SDK error's class name (`ConnectionError`, `TimeoutError`, an abort's `AbortError`),
 * never its message; `_OTHER` for anything that is not an Error.
 */
export function errorType(error: unknown): string {
  return error instanceof Error ? error.name : '_OTHER';
}

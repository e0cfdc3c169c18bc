/**
 * Debug logging of requests: one line per attempt, built only from values that cannot hold a secret
 * (method, URL path, status, duration, retry number). Headers, bodies and query strings are never logged;
 * `redact` (the secrets module) is a second fence for the free text of error messages.
 */
import { redact } from '../core/scrub.js';
import type { RequestTrace } from '../core/tracing.js';

/**
 * Anything with a console-style `debug` method: `console`, a pino or a winston logger.
 *
 * @example
 * const client = new PostSched({ baseUrl, auth, logger: console })
 * // postsched: GET /posts/post_1 → 200 in 41 ms (retry 0)
 */
export interface Logger {
  /** Gets one line per attempt; the SDK passes only `message`. */
  debug(message: string, ...rest: unknown[]): void;
}

/**
 * Writes the line of one attempt (`url`: its URL; `outcome`: the HTTP status, or the error name when no answer came
 * back); a throwing logger never breaks the request.
 */
export function logAttempt(logger: Logger, attempt: RequestTrace, url: URL, outcome: number | string): void {
  const line =
    `postsched: ${attempt.method} ${redact(url.pathname)} → ${typeof outcome === 'number' ? outcome : redact(outcome)}` +
    ` in ${Math.round(attempt.durationMs ?? 0)} ms (retry ${attempt.attempt - 1})`;
  try {
    logger.debug(line);
  } catch {
    // Logging is best effort.
  }
}

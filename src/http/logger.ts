/**
 * Debug logging of requests: one line per attempt, built only from values that cannot hold a secret
 * (method, URL path, status, duration, retry number). Headers, bodies and query strings are never logged;
 * `redact` (the secrets module) is a second fence for the free text of error messages.
 */
import { redact } from '../scrub.js';

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

/** What one attempt did, as logged. */
export interface AttemptRecord {
  method: string;
  path: string;
  /** HTTP status, or the error name when no answer came back. */
  outcome: number | string;
  durationMs: number;
  retry: number;
}

/** Writes the line for one attempt; a throwing logger never breaks the request. */
export function logAttempt(logger: Logger | undefined, record: AttemptRecord): void {
  if (logger === undefined) return;
  const line =
    `postsched: ${record.method} ${redact(record.path)} → ${typeof record.outcome === 'number' ? record.outcome : redact(record.outcome)}` +
    ` in ${Math.round(record.durationMs)} ms (retry ${record.retry})`;
  try {
    logger.debug(line);
  } catch {
    // Logging is best effort.
  }
}

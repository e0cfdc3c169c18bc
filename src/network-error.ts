/**
 * What the SDK keeps of a runtime's network error (shared by the API attempts in src/http and the token requests
 * in src/oauth). The original may reference the request, whose headers or body hold the access token, the client
 * secret, the code or the verifier (a custom fetch may attach `init` or the Request to its error): it is never
 * attached, only a copy of its chain with names, redacted messages and system codes.
 */
import { scrub } from './scrub.js';

/** "TypeError ECONNREFUSED": the error's name and code, for log lines. */
export function errorName(error: unknown): string {
  if (!(error instanceof Error)) return 'error';
  const code = findCode(error);
  return code === undefined ? error.name : `${error.name} ${code}`;
}

/** The innermost message (fetch's own is only "fetch failed"), with the code when there is one. */
export function describeNetworkError(error: Error, secrets: ReadonlyArray<string | undefined> = []): string {
  let innermost: Error = error;
  for (let depth = 0; innermost.cause instanceof Error && depth < 8; depth++) innermost = innermost.cause;
  const message = scrub(String(innermost.message), secrets);
  const code = findCode(error);
  return code === undefined || message.includes(code) ? message : `${message} (${code})`;
}

/** The first `code` in the cause chain (`ECONNREFUSED`, `UND_ERR_SOCKET` …). */
export function findCode(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 8) return undefined;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  if (Array.isArray(errors) && errors.length > 0) return findCode(errors[0], depth + 1);
  return findCode(cause, depth + 1);
}

/**
 * A copy of the runtime's error chain keeping only name, message and stack (scrubbed), `code`, `syscall` and
 * `errno`: the original may reference the request, whose headers hold the access token.
 */
export function sanitizeCause(error: unknown, depth = 0, secrets: ReadonlyArray<string | undefined> = []): Error | undefined {
  if (!(error instanceof Error) || depth > 8) return undefined;
  const nested = Array.isArray((error as { errors?: unknown }).errors)
    ? ((error as AggregateError).errors.map((e) => sanitizeCause(e, depth + 1, secrets)).filter((e) => e !== undefined) as Error[])
    : undefined;
  const cause = sanitizeCause(error.cause, depth + 1, secrets);
  const copy =
    nested === undefined
      ? new Error(scrub(String(error.message), secrets), cause === undefined ? {} : { cause })
      : new AggregateError(nested, scrub(String(error.message), secrets), cause === undefined ? {} : { cause });
  Object.defineProperty(copy, 'name', { value: scrub(String(error.name), secrets), enumerable: false, configurable: true, writable: true });
  if (typeof error.stack === 'string') copy.stack = scrub(error.stack, secrets);
  for (const key of ['code', 'syscall', 'errno'] as const) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (typeof value === 'number' || (typeof value === 'string' && value.length <= 64)) Object.assign(copy, { [key]: typeof value === 'string' ? scrub(value, secrets) : value });
  }
  return copy;
}

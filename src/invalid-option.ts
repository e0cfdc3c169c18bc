/**
 * The one option check: every input check in the SDK throws the same `ValidationError`, whose message starts with
 * the option's name in backticks and whose `path` is that name; every numeric option, client-level and per call, is
 * checked by `integerOption` against its bounds; a per-call option the call does not take is refused by name.
 */
import { ValidationError } from './errors.js';

/** `setTimeout`'s ceiling (a longer delay fires at once): the most any time-out or wait option may be, in ms. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** The most retries a call may make. */
export const MAX_RETRIES = 10;

/** Throws `ValidationError("`name` problem", path)`; `problem` says what is wrong and how to fix it. */
export function invalidOption(name: string, problem: string, path: ReadonlyArray<string | number> = [name]): never {
  throw new ValidationError(`\`${name}\` ${problem}`, path);
}

/** `value` when it is a function or `undefined`; otherwise "`name` must be a function." */
export function optionalFunction<T>(value: T, name: string): T {
  if (value !== undefined && typeof value !== 'function') invalidOption(name, 'must be a function.');
  return value;
}

/**
 * Throws "`name` is <value><problem>": a string value quoted as JSON (control characters escaped, at most 64
 * characters, so no forged log line), a number, boolean or nullish value as written, anything else by its type.
 * `problem` starts with its own punctuation.
 */
export function invalidValue(name: string, value: unknown, problem: string, path: ReadonlyArray<string | number> = [name]): never {
  const shown =
    typeof value === 'string'
      ? JSON.stringify(value.slice(0, 64))
      : value == null || ['number', 'boolean', 'bigint'].includes(typeof value)
        ? String(value)
        : `of type ${typeof value}`;
  invalidOption(name, `is ${shown}${problem}`, path);
}

/** `value`, or `fallback` when it is `undefined`; anything but an integer from `min` to `max` is refused. */
export function integerOption(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    invalidOption(name, `must be an integer from ${min} to ${max}, got ${typeof value === 'number' ? value : typeof value}.`);
  }
  return value as number;
}

/** Client options, which a call cannot change: say where they go instead of ignoring them. */
const CLIENT_OPTIONS = ['baseUrl', 'auth', 'fetch', 'logger', 'maxRetryAfterMs', 'maxResponseBytes', 'appInfo', 'onRequest', 'onResponse', 'onRetry'];

/**
 * `options`, refused when it is not an object (`null` included), or when it holds a key (with a value) the call does
 * not take (`known`; without it, the keys are left to the pipeline's check).
 */
export function checkOptions<T>(options: T, known?: readonly string[]): T {
  if (typeof options !== 'object' || options === null) invalidOption('options', 'must be an object of request options, such as { timeoutMs: 5000 }.');
  if (known === undefined) return options;
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || known.includes(name)) continue;
    invalidOption(
      name,
      `is not an option of this call (it takes ${known.join(', ')}).` +
        (CLIENT_OPTIONS.includes(name) ? ' It is a client option: pass it to `new PostSched()` or `client.withOptions()`.' : ''),
    );
  }
  return options;
}

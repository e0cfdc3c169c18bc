/**
 * The shape most input checks share: a `ValidationError` whose message starts with the option's name in
 * backticks and whose `path` is that name. One helper, so each check in the SDK is one short call.
 */
import { ValidationError } from './errors.js';

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

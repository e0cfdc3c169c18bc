/**
 * The one way to refuse input: every input check in the SDK throws the `ValidationError` made here (nothing else in
 * src/ constructs one: scripts/check-kernel.mjs), whose message starts with the option's name in backticks and whose
 * `path` is that name (`refusal` for input wrong as a whole); every numeric option, client-level and per call, is
 * checked by `integerOption` against its bounds; a per-call option the call does not take is refused by name.
 */
import { ValidationError } from './errors.js';

/** `setTimeout`'s ceiling (a longer delay fires at once): the most any time-out or wait option may be, in ms. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** The most retries a call may make. */
export const MAX_RETRIES = 10;

/**
 * The `ValidationError` of input wrong as a whole, or of a message that is not "`name` problem" (thrown by the
 * caller, or handed to a rejection); `message` says what is wrong and how to fix it.
 */
export function refusal(message: string, path: ReadonlyArray<string | number> = []): ValidationError {
  return new ValidationError(message, path);
}

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

/**
 * Every option name of `T`, checked complete by the compiler (a `{ name: 0 }` per option): the `known` list of
 * `checkOptions`.
 */
export const optionNames = <T>(names: { [K in keyof Required<T>]: 0 }): readonly string[] => Object.keys(names);

/**
 * `checkOptions` for a constructor (`of`: "new PostSched()"), whose refusal of a missing options object says what it
 * `needs`: "new PostSched() needs an options object: { baseUrl, auth }.".
 */
export function constructorOptions<T>(options: T, known: readonly string[] | undefined, of: string, needs: string): T {
  if (typeof options !== 'object' || options === null) throw refusal(`${of} needs an options object: ${needs}.`);
  return checkOptions(options, known, of);
}

/**
 * `options`, as a copy of its own enumerable properties (on a null prototype: an option set on `Object.prototype` is
 * never read), refused when it is not an object (`null` included), when reading it throws (a getter, a Proxy), or
 * when it holds a key (with a value) that `of` does not take (`known`, with the closest name; without `known`, the
 * keys are left to the pipeline's check; `elsewhere` may say where such a key goes). Read every options object
 * through it, once.
 */
export function checkOptions<T>(options: T, known?: readonly string[], of = 'this call', elsewhere?: (name: string) => string): T {
  if (typeof options !== 'object' || options === null) {
    invalidOption('options', `must be an object: the options of ${of}${of === 'this call' ? ', such as { timeoutMs: 5000 }' : ''}.`);
  }
  const own: Record<string, unknown> = Object.create(null);
  try {
    for (const name of Object.keys(options)) own[name] = (options as Record<string, unknown>)[name];
  } catch {
    // The thrown error's message is not repeated: it may hold anything, a secret included.
    invalidOption('options', `of ${of} could not be read (a getter or Proxy threw): pass a plain object.`, []);
  }
  for (const name in own) {
    if (known === undefined || own[name] === undefined || known.includes(name)) continue;
    const shown = /^[\w$]{1,64}$/.test(name) ? name : JSON.stringify(name.slice(0, 64));
    const near = closest(name, known, 4);
    invalidOption(
      shown,
      `is not an option of ${of} (it takes ${known.join(', ')}).` +
        (near === undefined ? '' : ` Did you mean \`${near}\`?`) +
        (elsewhere?.(name) ?? ''),
      [name],
    );
  }
  return own as T;
}

/** The name of `names` closest to `name` (case aside), when it is close enough to be a typo. */
export function closest(name: string, names: Iterable<string>, within = Math.min(3, name.length / 3)): string | undefined {
  let best: string | undefined;
  for (const candidate of names) {
    // Lengths this far apart are at least this far apart: a long name costs no distance table (1 MB took 80 s).
    if (Math.abs(name.length - candidate.length) >= within) continue;
    const found = distance(name.toLowerCase(), candidate.toLowerCase());
    if (found < within) [best, within] = [candidate, found];
  }
  return best;
}

/** Levenshtein distance: the fewest one-character insertions, deletions or substitutions from `a` to `b`. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (const char of a) {
    let diagonal = row[0]!++;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (char === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

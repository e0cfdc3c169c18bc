/**
 * The SDK's two checks: answers after a call (`ResponseValidationError`, with the raw body) and input before it
 * (`ValidationError`). Both are hand-written rather than zod: an answer has at most two required fields
 * (wire-contract.ts) and is returned untouched, so a schema would cost a copy of every object and several KB of
 * bundle for a handful of `typeof` checks.
 */
import { ResponseValidationError } from '../core/errors.js';
import { integerOption, refusal } from '../core/invalid-option.js';
import { isRecord } from '../core/is-record.js';
import type { WireType } from './wire-contract.js';

/** Where a value sits: `['data', 3, 'account_ids', 0]`. */
export type Path = ReadonlyArray<string | number>;

const EXPECTED: Record<WireType, string> = { string: 'string', number: 'number', 'string[]': 'array of strings', array: 'array' };

/** A value's JSON kind as messages name it: `null`, `array`, `object`, `string`, `number`, `boolean`, `undefined`. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function formatPath(path: Path): string {
  return path.length === 0 ? '(root)' : path.join('.');
}

/** Thrown inside a check, turned into a `ResponseValidationError` by `answerParser`. */
class Unusable {
  constructor(
    readonly path: Path,
    readonly expected: string,
    readonly received: unknown,
  ) {}
}

/** `value` must be an object whose `fields` have their wire types; it is returned untouched. */
export function checkFields(value: unknown, fields: Readonly<Record<string, WireType>>, path: Path): Record<string, unknown> {
  if (!isRecord(value)) throw new Unusable(path, 'object', value);
  for (const key in fields) {
    const type = fields[key] as WireType;
    const field = value[key];
    if (type === 'string' || type === 'number') {
      if (typeof field !== type) throw new Unusable([...path, key], type, field);
    } else {
      if (!Array.isArray(field)) throw new Unusable([...path, key], EXPECTED[type], field);
      if (type === 'string[]') {
        for (let i = 0; i < field.length; i++) {
          if (typeof field[i] !== 'string') throw new Unusable([...path, key, i], 'string', field[i]);
        }
      }
    }
  }
  return value;
}

/**
 * A parser for `RequestSpec.parse`: `check` throws where the answer cannot be used, and the parser turns that into a
 * `ResponseValidationError` naming the path, the expected type and the received one, with the raw body.
 */
export function answerParser<T>(what: string, check: (body: unknown) => unknown): (body: unknown) => T {
  return (body) => {
    try {
      return check(body) as T;
    } catch (error) {
      if (!(error instanceof Unusable)) throw error;
      const received = error.received === undefined ? (error.path.length === 0 ? 'an empty body' : 'nothing (the field is missing)') : kindOf(error.received);
      throw new ResponseValidationError(
        `The service answered with ${what} that the SDK cannot use, at "${formatPath(error.path)}": expected ${error.expected}, ` +
          `received ${received}. The raw body is on \`error.body\`.`,
        error.path,
        body,
      );
    }
  };
}

/** A parser that checks the `given` fields of one object (the others are kept as sent). */
export function objectParser<T>(what: string, given: Readonly<Record<string, WireType>>): (body: unknown) => T {
  return answerParser<T>(what, (body) => checkFields(body, given, []));
}

// ---------------------------------------------------------------------------------------------------------------
// Input

/**
 * Checks one known input field; throws a `ValidationError` (through `invalid`) naming `path`. Called only for a
 * value other than `undefined` (an absent field).
 */
export type FieldCheck = (value: unknown, path: Path) => void;

/** The known fields of one input object, and which must be there. */
export interface InputShape {
  /** The method, for messages: `posts.create`. */
  readonly call: string;
  readonly fields: Readonly<Record<string, FieldCheck>>;
  readonly required?: readonly string[];
  /** Where a field the SDK does not know goes instead: `extraBody` or `extraQuery`. */
  readonly escapeHatch: 'extraBody' | 'extraQuery';
}

/** The request options a caller may put among the params by mistake. */
const REQUEST_OPTIONS = ['idempotencyKey', 'signal', 'timeoutMs', 'maxRetries', 'headers', 'extraBody', 'extraQuery', 'onProgress'];

/** `ValidationError("`path` problem")`. */
export function invalid(path: Path, problem: string): never {
  throw refusal(`\`${formatPath(path)}\` ${problem}`, path);
}

/**
 * Checks input before anything is sent: an object, holding only known fields (a typo is refused with the name it
 * probably meant), each of the right kind. Only what is certainly wrong is refused; what only the service can judge
 * (a time in the past, a text too long) is left to its answer.
 */
export function checkInput(input: unknown, shape: InputShape): void {
  const known = Object.keys(shape.fields);
  if (!isRecord(input)) {
    throw refusal(`\`${shape.call}\` takes an object with the fields ${known.join(', ')}; got ${kindOf(input)}.`);
  }
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(shape.fields, key)) invalid([key], unknownField(key, known, shape));
  }
  for (const key of shape.required ?? []) {
    if (input[key] === undefined) invalid([key], 'is required.');
  }
  for (const key of known) {
    const value = input[key];
    if (value !== undefined) (shape.fields[key] as FieldCheck)(value, [key]);
  }
}

function unknownField(key: string, known: readonly string[], shape: InputShape): string {
  const squash = (name: string) => name.toLowerCase().replace(/[_-]/g, '');
  const meant = known.find((name) => squash(name) === squash(key));
  const hint =
    meant !== undefined
      ? ` Did you mean \`${meant}\`?`
      : REQUEST_OPTIONS.includes(key)
        ? ' It is a request option: pass it in the options, the last argument.'
        : '';
  return (
    `is not a field \`${shape.call}\` knows (${known.join(', ')}).${hint} ` +
    `To send a field the SDK does not know, pass it in the request options: \`{ ${shape.escapeHatch}: { ${JSON.stringify(key)}: … } }\`.`
  );
}

/** A string. */
export const isString: FieldCheck = (value, path) => {
  if (typeof value !== 'string') invalid(path, `must be a string, got ${kindOf(value)}.`);
};

/** An array of non-empty ids (`noun`: "account id"); at least one when `nonEmpty`. */
export function idList(noun: string, nonEmpty: boolean): FieldCheck {
  return (value, path) => {
    if (!Array.isArray(value)) invalid(path, `must be an array of ${noun}s, got ${kindOf(value)}.`);
    if (nonEmpty && value.length === 0) invalid(path, `must name at least one ${noun}.`);
    value.forEach((id: unknown, i) => {
      if (typeof id !== 'string' || id === '') invalid([...path, i], `must be a non-empty ${noun}, got ${id === '' ? 'an empty string' : kindOf(id)}.`);
    });
  };
}

/** One of `values`. */
export function oneOf(values: readonly string[], hatch: string): FieldCheck {
  return (value, path) => {
    if (typeof value !== 'string' || !values.includes(value)) {
      invalid(path, `must be one of ${values.join(', ')}, got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 60)) : kindOf(value)}. ${hatch}`);
    }
  };
}

/** A whole number from 1 to `max` (the one option check). */
export function wholeNumber(max: number): FieldCheck {
  return (value, path) => void integerOption(value, formatPath(path), 1, 1, max);
}

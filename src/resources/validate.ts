/**
 * The SDK's two checks, both made by zod/mini schemas: answers after a call (the schemas of wire-contract.ts,
 * failing with `ResponseValidationError` and the raw body) and input before it (strict object schemas, failing
 * with `ValidationError`). This module turns a schema's first issue into the SDK's message.
 */
import * as z from 'zod/mini';
import { ResponseValidationError } from '../core/errors.js';
import { refusal } from '../core/invalid-option.js';
import { isRecord } from '../core/is-record.js';

/** Where a value sits: `['data', 3, 'account_ids', 0]`. */
export type Path = ReadonlyArray<string | number>;

/** A value's JSON kind as messages name it: `null`, `array`, `object`, `string`, `number`, `boolean`, `undefined`. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function formatPath(path: Path): string {
  return path.length === 0 ? '(root)' : path.join('.');
}

/** The value at `path` inside `root` (`undefined` where it is missing). */
function valueAt(root: unknown, path: Path): unknown {
  let value = root;
  for (const key of path) value = isRecord(value) || Array.isArray(value) ? (value as Record<string | number, unknown>)[key] : undefined;
  return value;
}

/** An issue's path as the SDK's errors carry it. */
function pathOf(issue: z.core.$ZodIssue): Path {
  return issue.path.filter((key): key is string | number => typeof key !== 'symbol');
}

/**
 * A parser for `RequestSpec.parse`: the answer, once `schema` accepts it, or a `ResponseValidationError` naming the path,
 * the expected type (the issue's message: "expected string") and the received one, with the raw body.
 */
export function answerParser<T>(what: string, schema: z.ZodMiniType<T, unknown>): (body: unknown) => T {
  return (body) => {
    const result = schema.safeParse(body);
    // The answer as sent, not the schema's copy: the same values (an answer schema transforms nothing), in the
    // service's key order.
    if (result.success) return body as T;
    const issue = result.error.issues[0] as z.core.$ZodIssue;
    const path = pathOf(issue);
    const value = valueAt(body, path);
    const received = value === undefined ? (path.length === 0 ? 'an empty body' : 'nothing (the field is missing)') : kindOf(value);
    throw new ResponseValidationError(
      `The service answered with ${what} that the SDK cannot use, at "${formatPath(path)}": ${issue.message}, ` +
        `received ${received}. The raw body is on \`error.body\`.`,
      path,
      body,
    );
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Input

/** One input object: its strict schema (known fields only), the method for messages, and the escape hatch. */
export interface InputShape {
  /** The method, for messages: `posts.create`. */
  readonly call: string;
  /** A strict object schema; each field's issue message says what is wrong ("must be a string, got number."). */
  readonly schema: z.ZodMiniObject;
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
 * probably meant), the required ones there, each of the right kind. Only what is certainly wrong is refused; what
 * only the service can judge (a time in the past, a text too long) is left to its answer.
 */
export function checkInput(input: unknown, shape: InputShape): void {
  const known = Object.keys(shape.schema.def.shape);
  if (!isRecord(input)) {
    throw refusal(`\`${shape.call}\` takes an object with the fields ${known.join(', ')}; got ${kindOf(input)}.`);
  }
  const result = shape.schema.safeParse(input);
  if (result.success) return;
  const issues = result.error.issues;
  // The order of the messages: a field the SDK does not know, then a missing one, then a wrong one.
  const unknown = issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown !== undefined) {
    const key = unknown.keys[0] as string;
    invalid([key], unknownField(key, known, shape));
  }
  const missing = issues.find((issue) => issue.path.length === 1 && input[issue.path[0] as string] === undefined);
  if (missing !== undefined) invalid(pathOf(missing), 'is required.');
  const issue = issues[0] as z.core.$ZodIssue;
  invalid(pathOf(issue), issue.message);
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

/** The params of an input schema (messages as `ValidationError` gives them, after the field's name). */
const problem = (message: (input: unknown) => string) => ({ error: (issue: { input?: unknown }) => message(issue.input) });

/** An input object holding only the known fields (`unrecognized_keys` for another). */
export function inputObject<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  return z.strictObject(shape, problem((input) => `must be an object of known fields only, got ${kindOf(input)}.`));
}

/** A string. */
export const inputString = () => z.string(problem((input) => `must be a string, got ${kindOf(input)}.`));

/**
 * An array of non-empty ids (`noun`: "account id"); at least one when `nonEmpty`. `z.minLength`, not a refinement:
 * it shows in the JSON Schema made from the schema (`minLength`, `minItems`), which the agent tools hand to models.
 */
export function idList(noun: string, nonEmpty: boolean) {
  const id = z.string(problem((input) => `must be a non-empty ${noun}, got ${kindOf(input)}.`)).check(z.minLength(1, `must be a non-empty ${noun}, got an empty string.`));
  const list = z.array(id, problem((input) => `must be an array of ${noun}s, got ${kindOf(input)}.`));
  return nonEmpty ? list.check(z.minLength(1, `must name at least one ${noun}.`)) : list;
}

/** One of `values`: `z.enum`, which a JSON Schema shows as `enum` (a union of literals would be an `anyOf`). */
export function oneOf<const T extends readonly string[]>(values: T, hatch: string) {
  return z.enum(
    values,
    problem((input) => `must be one of ${values.join(', ')}, got ${typeof input === 'string' ? JSON.stringify(input.slice(0, 60)) : kindOf(input)}. ${hatch}`),
  );
}

/** A whole number from 1 to `max`. */
export function wholeNumber(max: number) {
  return z.custom<number>(
    (value) => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= max,
    problem((input) => `must be an integer from 1 to ${max}, got ${typeof input === 'number' ? input : typeof input}.`),
  );
}

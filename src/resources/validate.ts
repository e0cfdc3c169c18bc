/**
 * The two schema checks of the SDK, both with zod/mini: input before any request (`ValidationError`), and
 * answers after it (`ResponseValidationError`, with the raw body). Response schemas are loose objects:
 * required known fields are checked, unknown ones kept (Assumptions table, "Field names").
 */
import type * as z from 'zod/mini';
import { ResponseValidationError, ValidationError } from '../errors.js';

type Issue = z.core.$ZodIssue;

/** A parser for `RequestSpec.parse`: checks `body` against `schema` and types it as `T`. */
export function responseParser<T>(schema: z.ZodMiniType, what: string): (body: unknown) => T {
  return (body) => {
    const result = schema.safeParse(body);
    if (result.success) return result.data as T;
    const issue = result.error.issues[0];
    const path = issue?.path.filter(isKey) ?? [];
    throw new ResponseValidationError(
      `The service answered with ${what} that does not match the expected shape at "${formatPath(path)}": ` +
        `${describeIssue(issue)}. The raw body is on \`error.body\`.`,
      path,
      body,
    );
  };
}

/** Checks input against `schema`; the error names the first bad field and says what it must be. */
export function checkInput(schema: z.ZodMiniType, value: unknown, root: ReadonlyArray<string | number> = []): void {
  const result = schema.safeParse(value);
  if (result.success) return;
  const issue = result.error.issues[0];
  const path = [...root, ...(issue?.path.filter(isKey) ?? [])];
  throw new ValidationError(`${path.length === 0 ? 'Input' : `\`${formatPath(path)}\``}: ${issue?.message ?? 'invalid'}.`, path);
}

function describeIssue(issue: Issue | undefined): string {
  if (issue === undefined) return 'invalid';
  if (issue.code === 'invalid_type') return `expected ${issue.expected}, got ${kindOf(issue.input)}`;
  return issue.message === 'Invalid input' ? issue.code.replace(/_/g, ' ') : issue.message;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function isKey(key: PropertyKey): key is string | number {
  return typeof key === 'string' || typeof key === 'number';
}

function formatPath(path: ReadonlyArray<string | number>): string {
  return path.length === 0 ? '(root)' : path.join('.');
}

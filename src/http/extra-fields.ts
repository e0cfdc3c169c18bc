/**
 * The per-call escape hatch for what the SDK's types do not know (openai-node's `extra_body` / `extra_query`):
 * `extraBody` fields are merged into the JSON body, `extraQuery` parameters into the URL. A key given here replaces
 * the SDK's own, on purpose: it is how a caller sends a value in a form the SDK would not.
 */
import { invalidOption } from '../core/invalid-option.js';
import { isRecord } from '../core/is-record.js';

type Query = Record<string, string | number | boolean | undefined>;

/** The JSON body with `extra` merged in; refused on a call that sends no JSON object. */
export function withExtraBody(json: unknown, extra: unknown): unknown {
  if (!isRecord(extra)) invalidOption('extraBody', 'must be an object of body fields, such as { campaign: "spring" }.');
  if (!isRecord(json)) invalidOption('extraBody', 'applies to calls that send a JSON body (posts.create, posts.update) and to media.upload.');
  return { ...json, ...extra };
}

/** The query with `extra` merged in; each value a string, finite number or boolean (`undefined`: left out). */
export function withExtraQuery(query: Query | undefined, extra: unknown): Query {
  return { ...query, ...checkedQuery(extra, 'extraQuery') };
}

/**
 * `query` checked as query parameters: an object whose values are strings, finite numbers or booleans (`undefined`
 * is left out). An object, an array, a Date, `null` or `NaN` would be sent as text nobody meant (`[object Object]`).
 */
export function checkedQuery(query: unknown, name: 'query' | 'extraQuery'): Query {
  if (!isRecord(query)) invalidOption(name, 'must be an object of query parameters, such as { status: "queued" }.');
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && typeof value !== 'string' && typeof value !== 'boolean' && !Number.isFinite(value)) {
      invalidOption(`${name}.${key}`, 'must be a string, a finite number or a boolean.', [name, key]);
    }
  }
  return query as Query;
}

/**
 * What an answer becomes once the request loop (request.ts) is done with it: the data of a 2xx, checked by the
 * resource's `parse`, or the typed error of any other status (status-error.ts picks the class). A server may echo
 * the tokens the call sent: they are cut out of whatever reaches the caller.
 */
import { responseText } from '../core/buffer-response.js';
import { ResponseValidationError, type APIError } from '../core/errors.js';
import { scrub, scrubSecrets, scrubValue } from '../core/scrub.js';
import { makeAPIError } from '../core/status-error.js';
import type { PipelineResult } from './api-promise.js';
import { requestIdOf } from './hooks.js';
import type { RequestSpec } from './options.js';
import { retryAfterMs } from './retry.js';

/** A 2xx answer: its JSON parsed and checked by the resource's `parse`. */
export function parse<T>(spec: RequestSpec<T>, response: Response, tokens: readonly string[]): PipelineResult<T> {
  const text = responseText(response);
  const raw = parseBody(text);
  if (typeof raw === 'string') {
    throw new ResponseValidationError(notJsonMessage(spec.method, spec.path, response), [], scrubSecrets(text, tokens));
  }
  let data: T;
  try {
    data = spec.parse(raw);
  } catch (error) {
    // The raw body goes on the error, but never an access token the server echoed into it.
    if (!(error instanceof ResponseValidationError)) throw error;
    throw new ResponseValidationError(error.message, error.path, scrubValue(error.body, tokens));
  }
  return { data, response, requestId: requestIdOf(response, tokens) };
}

/** The typed error of a failed answer, with the wait a 429 asked for. */
export function apiError(response: Response, tokens: readonly string[]): APIError {
  const wait = response.status === 429 ? retryAfterMs(response.headers) : undefined;
  return makeAPIError(response.status, parseBody(responseText(response)), response.headers, { secrets: tokens, ...(wait === undefined ? {} : { retryAfterMs: wait }) });
}

/** JSON when it parses, else the text; `undefined` for an empty body. */
function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Names the content type (a cut-off JSON and an HTML page call for different fixes) and, for a write, that it was done. */
function notJsonMessage(method: string, path: string, response: Response): string {
  const type = response.headers.get('content-type')?.split(';')[0]?.trim();
  return (
    `${method} /${path} answered ${response.status} with a body that is not JSON` +
    `${type ? ` (content-type ${scrub(type.slice(0, 100))})` : ''}; the raw text is on \`error.body\`.` +
    (method === 'GET' ? '' : ' The status says the service acted on the request.')
  );
}

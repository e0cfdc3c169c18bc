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

/**
 * The typed error of a failed answer, with the wait a 429 asked for. `firstCall` (the client has had no 2xx yet):
 * a 404 may then be a wrong `baseUrl` rather than a missing item, and the message says how to tell.
 */
export function apiError(response: Response, tokens: readonly string[], firstCall?: { baseUrl: string; spec: RequestSpec<unknown> }): APIError {
  const wait = response.status === 429 ? retryAfterMs(response.headers) : undefined;
  const body = parseBody(responseText(response));
  const hint = response.status === 404 && firstCall !== undefined ? baseUrlHint(body, firstCall.baseUrl, firstCall.spec) : undefined;
  return makeAPIError(response.status, body, response.headers, { secrets: tokens, hint, ...(wait === undefined ? {} : { retryAfterMs: wait }) });
}

/**
 * A 404 on a client's first call, when the base URL has a path (`/v1`) and the answer is about the route, not an
 * item: the route has no id (`GET /accounts` always exists) or the body speaks of a route ("No route GET /v1/accounts").
 * Only then: a `baseUrl` without a path, or a 404 for an id, says nothing about the base URL.
 */
function baseUrlHint(body: unknown, baseUrl: string, spec: RequestSpec<unknown>): string | undefined {
  const prefix = new URL(baseUrl).pathname.replace(/\/+$/, '');
  if (prefix === '') return undefined;
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  if (spec.route.includes('{') && !/\broute\b/i.test(text.slice(0, 2000))) return undefined;
  const shown = prefix.slice(0, 100);
  return `No call of this client has succeeded yet, and \`baseUrl\` ends in ${shown}, put before every route (${spec.method} ${shown}${spec.route}): if the service is not under ${shown}, remove it.`;
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

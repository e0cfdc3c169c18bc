/**
 * The request pipeline, once for every resource, read top to bottom. A resource describes a call (`RequestSpec`) and
 * gets an `APIPromise` back; `#execute` checks the call's options, builds its headers and body once, then loops:
 * 1. one ky request per attempt: ky builds the URL's query and the JSON body and runs the time-out and the caller's
 *    signal; its own retries are off, so every decision is taken below;
 * 2. inside it, `#send` (ky's `fetch` option, so the time-out covers it): the access token, the hooks, tracing, the
 *    log line, fetch, and the answer's body read up to `maxResponseBytes`;
 * 3. the answer classified: a success is parsed and checked; a 401 makes the token source refresh once and the call
 *    is sent again (Assumptions table, "Errors"); any other failure is sent again when retry.ts's rules say so,
 *    after their wait, and otherwise thrown as the SDK's typed error.
 */
import type { Options as KyOptions } from 'ky';
import { isHTTPError, isTimeoutError, ky, loadKy } from '#ky';
import { PostSchedError } from '../base-error.js';
import { readBody, responseText } from '../buffer-response.js';
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  RedirectError,
  ResponseValidationError,
  TimeoutError,
  UnprocessableEntityError,
} from '../errors.js';
import { checkOptions, integerOption, invalidOption, MAX_RETRIES, MAX_TIMEOUT_MS } from '../invalid-option.js';
import { describeNetworkError, errorName, sanitizeCause, scrub, scrubHeaders, scrubSecrets, scrubValue } from '../scrub.js';
import { APIPromise, type PipelineResult } from './api-promise.js';
import type { TokenSource } from './auth.js';
import type { BodySource } from './body.js';
import { withExtraBody, withExtraQuery } from './extra-fields.js';
import { checkedHeaders, setChecked } from './headers.js';
import { callHook, headersView, type Hooks } from './hooks.js';
import { logAttempt, type Logger } from './logger.js';
import { retryAfterMs, retryDelay } from './retry.js';
import { isTraced, requestChannel, type RequestTrace, type TracingChannelLike } from './tracing.js';

/**
 * What `new Headers(…)` takes. Not the DOM's `HeadersInit` name: @types/node declares `Headers` but not
 * `HeadersInit`, so a Node project without the DOM lib could not resolve it in our .d.ts files.
 */
export type HeadersInput = ConstructorParameters<typeof Headers>[0];

/** Options every API method takes as its last argument. */
export interface RequestOptions {
  /** Cancels the call, including the wait between retries. The call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Time-out of each attempt in ms, an integer from 1 to 2 147 483 647 (default: the client's, 30 000). */
  timeoutMs?: number;
  /** Retries after the first attempt, an integer from 0 to 10 (default: the client's, 2). */
  maxRetries?: number;
  /** Extra headers for this call. */
  headers?: HeadersInput;
  /**
   * Query parameters the SDK does not know, added to this call's URL (to every page of a list); a key here replaces
   * the SDK's own. The escape hatch for what the service supports beyond the SDK's types.
   *
   * @example
   * client.posts.list({}, { extraQuery: { status: 'queued_for_review' } })
   */
  extraQuery?: Record<string, string | number | boolean>;
}

/** Options of a call that creates something: an idempotency key makes it safe to retry. */
export interface WriteRequestOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`, the same on every attempt: the service replays its stored answer to a repeat,
   * so the SDK may retry the call after a 5xx or a time-out. Without one, a POST/PATCH is never re-sent
   * unless the service answered 429 or the connection failed before anything was sent.
   */
  idempotencyKey?: string;
  /**
   * Body fields the SDK does not know, merged into this call's JSON body; a key here replaces the SDK's own. The
   * escape hatch for what the service supports beyond the SDK's types (the params objects take known fields only).
   *
   * @example
   * client.posts.create({ account_ids: ['acc_1'], publish_at }, { extraBody: { campaign: 'spring' } })
   */
  extraBody?: Record<string, unknown>;
}

/**
 * The options a GET takes, and a call that writes. `extraBody` is let through to its own check, which says which
 * calls take it.
 */
/** Client options, which a call cannot change: say where they go instead of ignoring them. */
const CLIENT_OPTIONS = ['baseUrl', 'auth', 'fetch', 'logger', 'maxRetryAfterMs', 'maxResponseBytes', 'appInfo', 'onRequest', 'onResponse', 'onRetry'];
const clientOption = (name: string) => (CLIENT_OPTIONS.includes(name) ? ' It is a client option: pass it to `new PostSched()` or `client.withOptions()`.' : '');

const READ_OPTIONS = ['signal', 'timeoutMs', 'maxRetries', 'headers', 'extraQuery', 'extraBody'];
const WRITE_OPTIONS = [...READ_OPTIONS, 'idempotencyKey'];

/** A call without options: on a null prototype, as `checkOptions` gives them (`Object.prototype.timeoutMs` is no option). */
const NO_OPTIONS: WriteRequestOptions = Object.freeze(Object.create(null));

/**
 * The client settings the pipeline needs (see `PostSchedOptions`), computed once from the options: clients made from
 * the same options share one (src/client-setup.ts). @internal
 */
export interface PipelineConfig {
  baseUrl: string;
  /** The base URL's origin, for tracing and hooks. */
  origin: string;
  /** The headers every call sends (the client's, the User-Agent among them, `accept`), as ky takes them. */
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  maxRetries: number;
  maxRetryAfterMs: number;
  maxResponseBytes: number;
  fetch: (input: Request, init?: RequestInit) => Promise<Response>;
  logger: Logger | undefined;
  hooks: Hooks;
}

/** One call, as a resource describes it. `path` is relative to the base URL and already encoded. @internal */
export interface RequestSpec<T> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** The route template (`/posts/{id}`), for tracing and hooks. */
  route: string;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  body?: BodySource;
  /** Checks and types the parsed JSON body; throws `ResponseValidationError`. */
  parse: (body: unknown) => T;
  options?: WriteRequestOptions | undefined;
}

/** The state of one call that its attempts share. */
interface Call {
  readonly method: string;
  readonly route: string;
  readonly body: BodySource | undefined;
  /** The token of the next attempt; `undefined`: the attempt asks the token source. */
  token: string | undefined;
  /** The token a 401 refused: the next attempt first asks the token source for a newer one. */
  refused: string | undefined;
  /** Every token sent so far: cut out of anything the server echoes. */
  readonly sentTokens: string[];
  /** Attempts sent so far (a re-send after a 401 included): hooks and tracing number them from 1. */
  sent: number;
  /** The last answer, kept for a re-send after a 401 that finds no newer token: that 401 then stands. */
  last: Response | undefined;
}

/** The request pipeline of one client. @internal */
export class Pipeline {
  readonly #config: PipelineConfig;
  readonly #tokens: TokenSource;
  #tokenHeaders: { token: string; headers: Readonly<Record<string, string>> } | undefined;

  /** `config` may be shared by many pipelines; `tokens` is this client's own. */
  constructor(config: PipelineConfig, tokens: TokenSource) {
    this.#config = config;
    this.#tokens = tokens;
  }

  /** The client's headers with the token: the same object while the token is the same. */
  #withToken(token: string): Readonly<Record<string, string>> {
    if (this.#tokenHeaders?.token !== token) this.#tokenHeaders = { token, headers: { ...this.#config.headers, authorization: `Bearer ${token}` } };
    return this.#tokenHeaders.headers;
  }

  get baseUrl(): string {
    return this.#config.baseUrl;
  }

  /**
   * Runs one call. Given a function, the spec is built inside the returned promise, so an input error
   * (`ValidationError`) rejects it like any other failure — before anything is sent.
   */
  request<T>(spec: RequestSpec<T> | (() => RequestSpec<T>)): APIPromise<T> {
    return APIPromise.create(this.#execute(spec));
  }

  async #execute<T>(specOrBuild: RequestSpec<T> | (() => RequestSpec<T>)): Promise<PipelineResult<T>> {
    const spec = typeof specOrBuild === 'function' ? specOrBuild() : specOrBuild;
    const config = this.#config;
    const options: WriteRequestOptions = spec.options === undefined ? NO_OPTIONS : checkOptions(spec.options, spec.method === 'GET' ? READ_OPTIONS : WRITE_OPTIONS, 'this call', clientOption);
    const { signal } = options;
    // ky would fail on anything else with a TypeError of its own (AbortSignal.any takes only AbortSignals).
    if (signal != null && !(signal instanceof AbortSignal)) invalidOption('signal', 'must be an AbortSignal.');
    signal?.throwIfAborted();
    const timeoutMs = integerOption(options.timeoutMs, 'timeoutMs', config.timeoutMs, 1, MAX_TIMEOUT_MS);
    const maxRetries = integerOption(options.maxRetries, 'maxRetries', config.maxRetries, 0, MAX_RETRIES);

    // The client's headers are computed once; a call with its own headers gets a copy.
    let headers: Readonly<Record<string, string>> = config.headers;
    if (options.headers !== undefined || options.idempotencyKey !== undefined || spec.body !== undefined) {
      const own = checkedHeaders(options.headers, 'headers');
      if (options.idempotencyKey !== undefined) setChecked(own, 'idempotency-key', options.idempotencyKey, 'idempotencyKey');
      if (spec.body !== undefined) own.set('content-type', spec.body.contentType);
      headers = { ...headers, ...Object.fromEntries(own), accept: 'application/json' };
    }
    // A token at hand goes in with the other headers (RFC 6750 §2.1), saving a header write per attempt.
    const call: Call = { method: spec.method, route: spec.route, body: spec.body, token: this.#tokens.peek(), refused: undefined, sentTokens: [], sent: 0, last: undefined };
    const preset = call.token;
    if (preset !== undefined) headers = headers === config.headers ? this.#withToken(preset) : { ...headers, authorization: `Bearer ${preset}` };

    // Only what differs from ky's defaults: ky merges every key it is given on every call.
    const kyOptions: KyOptions = {
      headers,
      timeout: timeoutMs,
      retry: 0, // the loop below decides every retry
      // A redirect is answered, not followed (RedirectError): following would send the headers and a write
      // elsewhere, and a 303 would turn it into a GET whose answer came back as the write's.
      redirect: 'manual',
      fetch: (request, init) => this.#send(request as Request, init, call, preset), // ky always passes a Request
    };
    if (spec.method !== 'GET') kyOptions.method = spec.method;
    if (signal !== undefined) kyOptions.signal = signal;
    const json = options.extraBody === undefined ? spec.json : withExtraBody(spec.json, options.extraBody);
    const query = options.extraQuery === undefined ? spec.query : withExtraQuery(spec.query, options.extraQuery);
    if (json !== undefined) {
      kyOptions.json = json;
      kyOptions.stringifyJson = (value) => jsonText(value, options.extraBody);
    }
    if (query !== undefined) kyOptions.searchParams = withoutUndefined(query);
    // The full URL, not ky's prefixUrl: one string join instead of ky's checks on every call.
    const url = `${config.baseUrl}/${spec.path}`;
    // `#ky` (package.json "imports"): evaluated with the SDK in Web builds, on the first call under Node
    // (http/ky.node.ts), synchronously either way: the first call waits on no I/O that a fake clock would not drive.
    if (ky === undefined) loadKy();

    for (let retries = 0; ; ) {
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await ky!(url, kyOptions);
      } catch (error) {
        // ky throws on a status that is not ok (its default): the answer is classified below like any other.
        if (isHTTPError(error)) response = error.response;
        else failure = error;
      }
      call.last = response;
      // Like fetch, an aborted call rejects with the signal's reason (an AbortError unless the caller gave one).
      if (signal?.aborted === true) throw signal.reason;
      if (response?.ok === true) return parse(spec, response, call.sentTokens);
      if (failure !== undefined) {
        if (isTimeoutError(failure)) failure = new TimeoutError(timeoutMs);
      } else if (response!.status === 401 && call.refused === undefined && spec.body?.replayable !== false) {
        // One refresh, one more attempt; a streamed upload cannot be sent again, so its 401 stands.
        call.refused = call.token;
        continue;
      }
      const delayMs = retryDelay(response, failure, retries, {
        method: spec.method,
        hasIdempotencyKey: options.idempotencyKey !== undefined,
        bodyReplayable: spec.body?.replayable ?? true,
        maxRetryAfterMs: config.maxRetryAfterMs,
        maxRetries,
      });
      if (delayMs === undefined) throw response === undefined ? failure : apiError(response, call.sentTokens);
      retries++;
      if (config.hooks.onRetry !== undefined) callHook(config.hooks.onRetry, () => ({
        method: spec.method,
        route: spec.route,
        attempt: call.sent + 1,
        delayMs,
        ...(response === undefined
          ? { reason: failure instanceof TimeoutError ? ('timeout' as const) : ('connection' as const), status: undefined }
          : { reason: 'status' as const, status: response.status }),
      }));
      await sleep(delayMs, signal);
    }
  }

  /**
   * One attempt, as ky's `fetch`, inside its time-out: the token (refreshed first after a 401), the hooks, tracing,
   * the log line, fetch, and the answer's body read up to `maxResponseBytes`.
   */
  #send(request: Request, init: RequestInit | undefined, call: Call, preset: string | undefined): Promise<Response> {
    // The token is read per attempt (a retry after a long wait uses a token refreshed meanwhile); the usual case, a
    // token at hand and no 401 to refresh after, goes on without a promise more.
    const token = call.refused !== undefined ? undefined : call.sent === 0 ? call.token : (call.token = this.#tokens.peek());
    return token === undefined ? this.#sendWhenTokenReady(request, init, call, preset) : this.#sendWith(token, request, init, call, preset);
  }

  /** The token wait, then the attempt: it ends with the call (the caller's abort and the time-out abort `request.signal`). */
  async #sendWhenTokenReady(request: Request, init: RequestInit | undefined, call: Call, preset: string | undefined): Promise<Response> {
    const tokens = this.#tokens;
    if (call.refused !== undefined && call.token === call.refused) {
      const fresh = await untilAborted(tokens.refresh(call.refused), request.signal);
      // No newer token: the 401 stands (the next call will try again).
      if (fresh === undefined) return call.last as Response;
      call.token = fresh;
    }
    const token = (call.token ??= tokens.peek() ?? (await untilAborted(tokens.get(), request.signal)));
    return this.#sendWith(token, request, init, call, preset);
  }

  /**
   * The request as sent (token, streamed body), `onRequest`, and the exchange, traced when anyone listens. Not async
   * (one promise less per call): what it throws is returned as a rejection, as ky's time-out expects of a fetch.
   */
  #sendWith(token: string, request: Request, init: RequestInit | undefined, call: Call, preset: string | undefined): Promise<Response> {
    try {
      // ky hands each attempt its own Request, so the header can be set in place. A streamed body never goes
      // through ky (its clone for retries would tee it: the idle branch would hold the whole upload) and is attached
      // here, with `redirect: 'error'`: in any other mode fetch clones the request, and so tees the body, itself.
      const outgoing =
        call.body === undefined
          ? request
          : new Request(request, { body: call.body.create(request.signal), duplex: 'half', redirect: 'error' } as RequestInit);
      if (token !== preset) outgoing.headers.set('authorization', `Bearer ${token}`); // RFC 6750 §2.1
      call.sentTokens.push(token);
      const attempt = ++call.sent;
      const started = performance.now();
      const { onRequest } = this.#config.hooks;
      if (onRequest !== undefined) {
        callHook(onRequest, () => ({ method: call.method, url: request.url, route: call.route, attempt, headers: headersView(outgoing.headers, token) }));
      }
      const channel = requestChannel();
      if (!isTraced(channel)) return this.#exchange(request, outgoing, init, call, token, attempt, started);
      const trace: RequestTrace = { method: call.method, route: call.route, origin: this.#config.origin, attempt };
      return traced(channel, trace, started, () => this.#exchange(request, outgoing, init, call, token, attempt, started));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** fetch, and the answer's body read up to `maxResponseBytes`; the log line and `onResponse`; fetch's failures typed. */
  async #exchange(request: Request, outgoing: Request, init: RequestInit | undefined, call: Call, token: string, attempt: number, started: number): Promise<Response> {
    const { hooks, logger } = this.#config;
    const log =
      logger &&
      ((outcome: number | string) =>
        logAttempt(logger, { method: call.method, path: new URL(request.url).pathname, outcome, durationMs: performance.now() - started, retry: attempt - 1 }));
    let status: number | undefined;
    try {
      const answer = await this.#config.fetch(outgoing, init);
      status = answer.status;
      const response = await readBody(answer, this.#config.maxResponseBytes);
      log?.(response.status);
      if (hooks.onResponse !== undefined) {
        callHook(hooks.onResponse, () => ({
          method: call.method,
          url: request.url,
          route: call.route,
          attempt,
          status: response.status,
          headers: headersView(response.headers, token),
          requestId: requestIdOf(response, [token]),
          durationMs: performance.now() - started,
        }));
      }
      return response;
    } catch (error) {
      log?.(request.signal.aborted ? 'aborted' : errorName(error));
      // An abort (the caller's, or the time-out) keeps its own error; so do the SDK's own (a body over the limit).
      if (request.signal.aborted || error instanceof PostSchedError) throw error;
      const detail = error instanceof Error ? describeNetworkError(error, [token]) : 'the fetch function failed';
      // A streamed upload is sent with redirect 'error' (see #send): fetch fails on a redirect without showing it.
      if (call.body !== undefined && /redirect/i.test(detail)) {
        throw new RedirectError(0, undefined, new Headers(), `The service answered the upload with a redirect, which the SDK does not follow (${detail}). If the API moved, set \`baseUrl\` to its new address.`);
      }
      // Anything else a fetch throws (the runtime's TypeError, or whatever a custom fetch builds, which may hold
      // the Request or its init) becomes a ConnectionError holding only a sanitized copy of its chain.
      // Once a status came, the request reached the service: saying "could not reach" would invite a second write.
      throw new ConnectionError(
        status === undefined
          ? `Could not reach ${this.#config.origin}: ${detail}. Check the base URL and the network.`
          : `${call.method} answered ${status}, then its body broke off: ${detail}. The service may have acted on it.`,
        { cause: sanitizeCause(error, 0, [token]) },
      );
    }
  }

}

function withoutUndefined(query: Record<string, string | number | boolean | undefined>): Record<string, string | number | boolean> {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as Record<string, string | number | boolean>;
}

/**
 * The JSON body as ky sends it; what JSON cannot carry (a BigInt, a cycle) is a `ValidationError` before anything is
 * sent, naming `extraBody` when the call has one (the resources' own fields are checked), else a raw call's `body`.
 */
function jsonText(value: unknown, extraBody: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return invalidOption(extraBody === undefined ? 'body' : 'extraBody', 'cannot be sent as JSON (a BigInt, a cycle).');
  }
}

/** `x-request-id` of an answer, without any token the server echoed into it. */
function requestIdOf(response: Response, tokens: readonly string[]): string | undefined {
  const id = response.headers.get('x-request-id');
  return id === null ? undefined : scrubSecrets(id, tokens);
}

/** A 2xx answer: its JSON parsed and checked by the resource's `parse`. */
function parse<T>(spec: RequestSpec<T>, response: Response, sentTokens: string[]): PipelineResult<T> {
  const text = responseText(response);
  const raw = parseBody(text);
  if (typeof raw === 'string') {
    throw new ResponseValidationError(notJsonMessage(spec.method, spec.path, response), [], scrubSecrets(text, sentTokens));
  }
  let data: T;
  try {
    data = spec.parse(raw);
  } catch (error) {
    // The raw body goes on the error, but never an access token the server echoed into it.
    if (!(error instanceof ResponseValidationError)) throw error;
    throw new ResponseValidationError(error.message, error.path, scrubValue(error.body, sentTokens));
  }
  return { data, response, requestId: requestIdOf(response, sentTokens) };
}

/** The typed error of a failed answer (errors section of the Assumptions table: the status picks the class). */
function apiError(response: Response, sentTokens: string[]): PostSchedError {
  const body = parseBody(responseText(response));
  const wait = response.status === 429 ? retryAfterMs(response.headers) : undefined;
  return makeAPIError(response.status, body, response.headers, { secrets: sentTokens, ...(wait === undefined ? {} : { retryAfterMs: wait }) });
}

/** Picks the error class for an HTTP status (errors section of the Assumptions table): the classification of an answer. */
export function makeAPIError(
  status: number,
  body: unknown,
  headers: Headers,
  options: { message?: string; retryAfterMs?: number; secrets?: readonly string[] } = {},
): APIError {
  const { message, retryAfterMs, secrets = [] } = options;
  // A server may echo the request's credentials in its answer: they never reach the error, its body or its headers.
  if (secrets.length > 0) {
    body = scrubValue(body, secrets);
    headers = scrubHeaders(headers, secrets);
  }
  const ErrorClass =
    status === 0 || (status >= 300 && status < 400) ? RedirectError : (ERROR_CLASSES[status] ?? (status >= 500 ? InternalServerError : APIError));
  return new ErrorClass(status, body, headers, message, retryAfterMs);
}

/** The class of each status with one of its own (a wait is passed to each; only RateLimitError takes it). */
const ERROR_CLASSES: Partial<Record<number, new (status: number, body: unknown, headers: Headers, message?: string, retryAfterMs?: number) => APIError>> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

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

/** One attempt on the TracingChannel; the traced function returns nothing (the channel would put its result on the context). */
async function traced(channel: TracingChannelLike, trace: RequestTrace, started: number, exchange: () => Promise<Response>): Promise<Response> {
  let response: Response | undefined;
  await channel.tracePromise(async () => {
    try {
      response = await exchange();
      trace.status = response.status;
    } finally {
      trace.durationMs = performance.now() - started;
    }
  }, trace);
  return response as Response;
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts (the promise itself runs on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits `ms` between attempts; the caller's abort ends the wait at once (rejecting with its reason) and its timer. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The request pipeline, once for every resource: URL and headers, auth, retries, time-out, abort,
 * errors and parsing. Resources describe a call (`RequestSpec`) and get an `APIPromise` back.
 */
import type { Options as KyOptions } from 'ky';
import { ResponseValidationError } from '../errors.js';
import { APIPromise, type WithResponse } from './api-promise.js';
import { responseText } from '../buffer-response.js';
import { attemptFetch } from './attempt.js';
import type { TokenSource } from './auth.js';
import type { BodySource } from './body.js';
import { parseBody, toSDKError } from './errors.js';
import type { Logger } from './logger.js';
import { loadKy } from './ky.js';
import { retryOptions } from './retry.js';

/**
 * What `new Headers(…)` takes. Not the DOM's `HeadersInit` name: @types/node declares `Headers` but not
 * `HeadersInit`, so a Node project without the DOM lib could not resolve it in our .d.ts files.
 */
export type HeadersInput = ConstructorParameters<typeof Headers>[0];

/** Options every API method takes as its last argument. */
export interface RequestOptions {
  /** Cancels the call, including the wait between retries. The call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Time-out of each attempt in ms (default: the client's, 30 000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default: the client's, 2). */
  maxRetries?: number;
  /** Extra headers for this call. */
  headers?: HeadersInput;
}

/** Options of a call that creates something: an idempotency key makes it safe to retry. */
export interface WriteRequestOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`, the same on every attempt: the service replays its stored answer to a repeat,
   * so the SDK may retry the call after a 5xx or a time-out. Without one, a POST/PATCH is never re-sent
   * unless the service answered 429 or the connection failed before anything was sent.
   */
  idempotencyKey?: string;
}

/** The client settings the pipeline needs (see `PostSchedOptions`). */
export interface PipelineConfig {
  baseUrl: string;
  tokens: TokenSource;
  timeoutMs: number;
  maxRetries: number;
  maxRetryAfterMs: number;
  fetch: (input: Request, init?: RequestInit) => Promise<Response>;
  logger: Logger | undefined;
  headers: Headers;
}

/** One call, as a resource describes it. `path` is relative to the base URL and already encoded. */
export interface RequestSpec<T> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: BodySource;
  /** Checks and types the parsed JSON body; throws `ResponseValidationError`. */
  parse: (body: unknown) => T;
  options?: WriteRequestOptions | undefined;
}

export class Pipeline {
  readonly #config: PipelineConfig;

  constructor(config: PipelineConfig) {
    this.#config = config;
  }

  get baseUrl(): string {
    return this.#config.baseUrl;
  }

  /**
   * Runs one call. Given a function, the spec is built inside the returned promise, so an input error
   * (`ValidationError`) rejects it like any other failure — before anything is sent.
   */
  request<T>(spec: RequestSpec<T> | (() => RequestSpec<T>)): APIPromise<T> {
    return new APIPromise(this.#execute(spec));
  }

  async #execute<T>(specOrBuild: RequestSpec<T> | (() => RequestSpec<T>)): Promise<WithResponse<T>> {
    const spec = typeof specOrBuild === 'function' ? specOrBuild() : specOrBuild;
    const config = this.#config;
    const options = spec.options ?? {};
    const { signal } = options;
    signal?.throwIfAborted();
    const timeoutMs = options.timeoutMs ?? config.timeoutMs;

    const headers = new Headers(config.headers);
    new Headers(options.headers).forEach((value, name) => headers.set(name, value));
    headers.set('accept', 'application/json');
    if (options.idempotencyKey !== undefined) headers.set('idempotency-key', options.idempotencyKey);
    if (spec.body !== undefined) headers.set('content-type', spec.body.contentType);

    const kyModule = await loadKy();
    const kyOptions: KyOptions = {
      method: spec.method,
      prefixUrl: config.baseUrl,
      headers,
      timeout: timeoutMs,
      throwHttpErrors: true,
      retry: retryOptions({
        method: spec.method,
        hasIdempotencyKey: options.idempotencyKey !== undefined,
        bodyReplayable: spec.body?.replayable ?? true,
        maxRetries: options.maxRetries ?? config.maxRetries,
        maxRetryAfterMs: config.maxRetryAfterMs,
        signal,
        guards: kyModule,
      }),
      fetch: attemptFetch({ fetch: config.fetch, tokens: config.tokens, logger: config.logger, body: spec.body }),
    };
    if (signal !== undefined) kyOptions.signal = signal;
    if (spec.json !== undefined) kyOptions.json = spec.json;
    if (spec.query !== undefined) kyOptions.searchParams = withoutUndefined(spec.query);

    let response: Response;
    try {
      response = await kyModule.default(spec.path, kyOptions);
    } catch (error) {
      throw await toSDKError(error, { signal, timeoutMs }, kyModule);
    }
    const text = await responseText(response);
    const raw = parseBody(text);
    if (typeof raw === 'string') {
      throw new ResponseValidationError(notJsonMessage(spec.method, spec.path, response), [], text);
    }
    return { data: spec.parse(raw), response, requestId: response.headers.get('x-request-id') ?? undefined };
  }
}

/** Names the content type (a cut-off JSON and an HTML page call for different fixes) and, for a write, that it was done. */
function notJsonMessage(method: string, path: string, response: Response): string {
  const type = response.headers.get('content-type')?.split(';')[0]?.trim();
  return (
    `${method} /${path} answered ${response.status} with a body that is not JSON` +
    `${type ? ` (content-type ${type})` : ''}; the raw text is on \`error.body\`.` +
    (method === 'GET' ? '' : ' The status says the service acted on the request.')
  );
}

function withoutUndefined(query: Record<string, string | number | undefined>): Record<string, string | number> {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as Record<string, string | number>;
}

/**
 * The request pipeline, once for every resource: URL and headers, auth, retries, time-out, abort,
 * errors and parsing. Resources describe a call (`RequestSpec`) and get an `APIPromise` back.
 */
import type { Options as KyOptions } from 'ky';
import { ResponseValidationError } from '../errors.js';
import { scrub, scrubSecrets, scrubValue } from '../scrub.js';
import { APIPromise, type PipelineResult } from './api-promise.js';
import { responseText } from '../buffer-response.js';
import { attemptFetch } from './attempt.js';
import { withExtraBody, withExtraQuery } from './extra-fields.js';
import type { TokenSource } from './auth.js';
import type { BodySource } from './body.js';
import { parseBody, toSDKError } from './errors.js';
import { checkedHeaders, setChecked } from './headers.js';
import type { Hooks } from './hooks.js';
import type { Logger } from './logger.js';
import { loadedKy, loadKy } from './ky.js';
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
 * The client settings the pipeline needs (see `PostSchedOptions`), computed once from the options: clients made from
 * the same options share one (src/client-setup.ts).
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

/** One call, as a resource describes it. `path` is relative to the base URL and already encoded. */
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

export class Pipeline {
  readonly #config: PipelineConfig;
  readonly #tokens: TokenSource;

  /** `config` may be shared by many pipelines; `tokens` is this client's own. */
  constructor(config: PipelineConfig, tokens: TokenSource) {
    this.#config = config;
    this.#tokens = tokens;
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

  async #execute<T>(specOrBuild: RequestSpec<T> | (() => RequestSpec<T>)): Promise<PipelineResult<T>> {
    const spec = typeof specOrBuild === 'function' ? specOrBuild() : specOrBuild;
    const config = this.#config;
    const options = spec.options ?? {};
    const { signal } = options;
    signal?.throwIfAborted();
    const timeoutMs = options.timeoutMs ?? config.timeoutMs;

    // The client's headers are computed once; a call with its own headers gets a copy.
    let headers: Readonly<Record<string, string>> = config.headers;
    if (options.headers !== undefined || options.idempotencyKey !== undefined || spec.body !== undefined) {
      const own = checkedHeaders(options.headers, 'headers');
      if (options.idempotencyKey !== undefined) setChecked(own, 'idempotency-key', options.idempotencyKey, 'idempotencyKey');
      if (spec.body !== undefined) own.set('content-type', spec.body.contentType);
      headers = { ...headers, ...Object.fromEntries(own), accept: 'application/json' };
    }

    // A token at hand goes in with the other headers (RFC 6750 §2.1), saving a header write per attempt; the attempt
    // sets another one only when it changed (a refresh, a retry after a 401).
    const presetToken = this.#tokens.peek();
    if (presetToken !== undefined) headers = { ...headers, authorization: `Bearer ${presetToken}` };

    const kyModule = loadedKy() ?? (await loadKy());
    const sentTokens: string[] = [];
    const kyOptions: KyOptions = {
      method: spec.method,
      headers,
      timeout: timeoutMs,
      retry: retryOptions({
        method: spec.method,
        hasIdempotencyKey: options.idempotencyKey !== undefined,
        bodyReplayable: spec.body?.replayable ?? true,
        maxRetries: options.maxRetries ?? config.maxRetries,
        maxRetryAfterMs: config.maxRetryAfterMs,
        signal,
        guards: kyModule,
        route: spec.route,
        onRetry: config.hooks.onRetry,
      }),
      fetch: attemptFetch({
        fetch: config.fetch,
        tokens: this.#tokens,
        logger: config.logger,
        body: spec.body,
        maxResponseBytes: config.maxResponseBytes,
        sentTokens,
        presetToken,
        route: spec.route,
        origin: config.origin,
        hooks: config.hooks,
      }),
      // A redirect is answered, not followed (RedirectError): following would send the headers and a write
      // elsewhere, and a 303 would turn it into a GET whose answer came back as the write's.
      redirect: 'manual',
    };
    if (signal !== undefined) kyOptions.signal = signal;
    const json = options.extraBody === undefined ? spec.json : withExtraBody(spec.json, options.extraBody);
    const query = options.extraQuery === undefined ? spec.query : withExtraQuery(spec.query, options.extraQuery);
    if (json !== undefined) kyOptions.json = json;
    if (query !== undefined) kyOptions.searchParams = withoutUndefined(query);

    let response: Response;
    try {
      // The full URL, not ky's prefixUrl: one string join instead of ky's checks on every call. ky throws on a
      // status that is not ok (its default), which maps to the typed errors below.
      response = await kyModule.default(`${config.baseUrl}/${spec.path}`, kyOptions);
    } catch (error) {
      throw await toSDKError(error, { signal, timeoutMs, secrets: sentTokens }, kyModule);
    }
    const text = await responseText(response);
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
    return { data, response, requestId: response.headers.get('x-request-id') ?? undefined };
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

function withoutUndefined(query: Record<string, string | number | boolean | undefined>): Record<string, string | number | boolean> {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as Record<string, string | number | boolean>;
}

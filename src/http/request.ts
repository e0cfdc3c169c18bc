/**
 * The request pipeline, once for every resource, read top to bottom. ky is the engine: each call is one `ky()` call,
 * and ky runs the attempts: its `retry` loop (`limit`, `methods`, `shouldRetry`, `delay`, the wait under the caller's
 * signal), its `timeout` around each attempt, its `beforeRequest` hook before each, `HTTPError` / `TimeoutError`
 * mapped here to the SDK's error classes. The SDK's own code stays only where ky cannot say a rule:
 * - whether and when to send again (retry.ts, asked by `shouldRetry`, its wait handed to ky's `delay`): ky's
 *   `methods` cannot say "a POST with an idempotency key, after a 429, or when the connection never left";
 *   ky reads a `Retry-After` of `-5` as "now" and `1e400` as its cap, and past `maxRetryAfter` it waits the cap and
 *   retries, where the SDK ignores the first, and fails the others with a `RateLimitError` carrying the wait;
 * - each retry draws from the retry budget of the client's rate limiter, refilled by answers (`#shouldRetry`);
 * - a 401 gets one token refresh and one re-send at once, not counted as a retry (ky counts every re-send in its
 *   `limit`: its `limit` is the call's `maxRetries` plus that one);
 * - each attempt waits its turn from the rate limiter and reads the token again (`beforeRequest`: a token refreshed
 *   during a wait is sent), then tells the limiter what the answer said (`#attempt`);
 * - each attempt is reported once to the logger, the hooks and the TracingChannel (`#attempt` → attempt.ts:
 *   ky's hooks see no time-out and no answer's duration);
 * - each call runs inside its `postsched:call` trace (`#execute`, core/tracing.ts): its waits, token requests and
 *   attempts; a trace subscriber's `traceparent` goes with each attempt (`withTraceHeaders`);
 * - the answer read up to `maxResponseBytes` inside the attempt's time-out, and a streamed upload attached by the
 *   attempt, never given to ky, whose per-attempt `Request.clone()` would tee it (`#fetch`);
 * - the token goes only to the base URL's origin: redirects are answered (`redirect: 'manual'`), never followed.
 *
 * A call: `#prepare` checks its options and builds what ky takes; ky then runs the attempts, each:
 * turn, token and headers (`beforeRequest`) → `#attempt` (fetch, read, observed) → ok? parse : `shouldRetry`? wait : throw.
 */
import ky, { HTTPError, isTimeoutError, type BeforeRequestHook, type Options as KyOptions } from 'ky';
import { PostSchedError } from '../core/base-error.js';
import { readBody } from '../core/buffer-response.js';
import { ConnectionError, RateLimitError, RedirectError, TimeoutError, type OutcomeUnknown } from '../core/errors.js';
import { checkOptions, integerOption, invalidOption, MAX_RETRIES, MAX_TIMEOUT_MS } from '../core/invalid-option.js';
import { describeNetworkError, requestNeverLeft, sanitizeCause } from '../core/scrub.js';
import { sleep, within } from '../core/time-bound.js';
import { publishWait, traceCall } from '../core/tracing.js';
import { apiError, parse } from './answer.js';
import { APIPromise, type PipelineResult } from './api-promise.js';
import { observe, retrying, type ObservedCall } from './attempt.js';
import { requestIdOf } from './hooks.js';
import type { TokenSource } from './auth.js';
import { withExtraBody, withExtraQuery } from './extra-fields.js';
import { checkedHeaders, setChecked } from './headers.js';
import { clientOption, READ_OPTIONS, WRITE_OPTIONS, type PipelineConfig, type RequestSpec, type WriteRequestOptions } from './options.js';
import { RETRY_STATUS_CODES, retryDelay, type RetryRules } from './retry.js';
import { answerFacts, GO, type RateLimiterLike, type Turn } from './rate-limiter.js';

/** A call without options: on a null prototype, as `checkOptions` gives them (`Object.prototype.timeoutMs` is no option). */
const NO_OPTIONS: WriteRequestOptions = Object.freeze(Object.create(null));

/** The methods that change something: their outcome may be unknown (`isOutcomeUnknown`). */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Every method the SDK sends: ky's `methods` lets each through to `shouldRetry`, which applies the rules (retry.ts). */
const ALL_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'];

/** A call as `#prepare` made it, and what its attempts learnt so far. */
interface Call<T> extends ObservedCall {
  readonly spec: RequestSpec<T>;
  readonly timeoutMs: number;
  readonly rules: RetryRules;
  /** The token of each attempt sent so far: cut out of anything the server echoes; its length numbers the attempts. */
  readonly tokens: string[];
  /** What the refresh after a 401 gave: sent from then on. */
  fresh: string | undefined;
  /** Retries made (the 401's re-send is none). */
  retries: number;
  /** The quota window of this attempt's turn (0: none), and whether its answer set the user's block. */
  window: number;
  blockedByThis: boolean;
  /** The wait `shouldRetry` decided, which ky's `delay` gives it. */
  delayMs: number;
  /** Why an attempt handed to fetch got no whole answer (the service may have acted), or `undefined`. */
  lost: string | undefined;
  readonly idempotencyKey: string | undefined;
  /** The `x-request-id` of the last answer whose headers came. */
  requestId: string | undefined;
}

/** The request pipeline of one client. @internal */
export class Pipeline {
  readonly #config: PipelineConfig;
  readonly #tokens: TokenSource;
  /** The rate limiter's key of this client's calls (its user). */
  readonly #limitKey: string;
  /** Whether any call of this client had a 2xx: its base URL is then right, and a 404 is about the item. */
  #answered = false;
  /** This client's requests on their way: an answer's `RateLimit-Remaining` does not count them yet. */
  #sending = 0;

  /** `config` may be shared by many pipelines; `tokens` and `limitKey` are this client's own. */
  constructor(config: PipelineConfig, tokens: TokenSource, limitKey = 'default') {
    this.#config = config;
    this.#tokens = tokens;
    this.#limitKey = limitKey;
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
    const [call, options] = this.#prepare(spec);
    // The call on `postsched:call`: its waits, token requests and attempts (all in ky's run) happen inside it.
    return traceCall(() => ({ method: call.method, route: call.route, origin: this.#config.origin }), () => this.#run(spec, call, options));
  }

  /** ky runs the call's attempts; a failure becomes the SDK's error, an answer is parsed. */
  async #run<T>(spec: RequestSpec<T>, call: Call<T>, options: KyOptions): Promise<PipelineResult<T>> {
    let response: Response;
    try {
      response = await ky(call.url, options);
    } catch (error) {
      // Like fetch, an aborted call rejects with the signal's reason (an AbortError unless the caller gave one).
      if (call.signal?.aborted === true) throw call.signal.reason;
      if (error instanceof HTTPError) {
        throw apiError(error.response, call.tokens, this.#answered ? undefined : { baseUrl: this.#config.baseUrl, spec });
      }
      const failure = sdkError(error, call);
      throw call.lost !== undefined && WRITES.has(call.method) && (failure instanceof ConnectionError || failure instanceof TimeoutError) ? outcomeUnknown(failure, call) : failure;
    }
    this.#answered = true;
    return parse(spec, response, call.tokens);
  }

  /** The call's options checked, and what ky takes built once: the URL with its query, headers, body, retry, hooks. */
  #prepare<T>(spec: RequestSpec<T>): [Call<T>, KyOptions] {
    const config = this.#config;
    const options: WriteRequestOptions = spec.options === undefined ? NO_OPTIONS : checkOptions(spec.options, spec.method === 'GET' ? READ_OPTIONS : WRITE_OPTIONS, 'this call', clientOption);
    const { signal, idempotencyKey } = options;
    // ky would fail on anything else with a TypeError of its own (AbortSignal.any takes only AbortSignals).
    if (signal != null && !(signal instanceof AbortSignal)) invalidOption('signal', 'must be an AbortSignal.');
    signal?.throwIfAborted();
    const timeoutMs = integerOption(options.timeoutMs, 'timeoutMs', config.timeoutMs, 1, MAX_TIMEOUT_MS);
    const maxRetries = integerOption(options.maxRetries, 'maxRetries', config.maxRetries, 0, MAX_RETRIES);

    // The client's headers are shared by its calls; a call with its own, or with a body, gets a copy.
    let headers = config.headers;
    if (options.headers !== undefined || idempotencyKey !== undefined || spec.body !== undefined || spec.json !== undefined) {
      const own = checkedHeaders(options.headers, 'headers');
      if (idempotencyKey !== undefined) setChecked(own, 'idempotency-key', idempotencyKey, 'idempotencyKey');
      if (spec.body !== undefined) own.set('content-type', spec.body.contentType);
      const copy: Record<string, string> = { ...config.headers, ...Object.fromEntries(own), accept: 'application/json' };
      if (spec.json !== undefined) copy['content-type'] ??= 'application/json';
      headers = copy;
    }
    const json = options.extraBody === undefined ? spec.json : withExtraBody(spec.json, options.extraBody);
    const query = options.extraQuery === undefined ? spec.query : withExtraQuery(spec.query, options.extraQuery);

    const call: Call<T> = {
      method: spec.method,
      route: spec.route,
      // The full URL, not ky's prefixUrl and searchParams: one string, built once for every attempt.
      url: withQuery(`${config.baseUrl}/${spec.path}`, query),
      signal,
      spec,
      timeoutMs,
      rules: {
        method: spec.method,
        hasIdempotencyKey: idempotencyKey !== undefined,
        bodyReplayable: spec.body?.replayable ?? true,
        maxRetryAfterMs: config.maxRetryAfterMs,
        maxRetries,
      },
      tokens: [],
      fresh: undefined,
      retries: 0,
      window: 0,
      blockedByThis: false,
      delayMs: 0,
      lost: undefined,
      idempotencyKey,
      requestId: undefined,
    };
    const turnAndToken: BeforeRequestHook = async (request) => {
      const limiter = config.rateLimiter;
      const turn = limiter.take(this.#limitKey);
      call.window = turn === GO ? 0 : await waitTurn(limiter, this.#limitKey, turn, call, config.origin);
      // The token, before the attempt's time-out starts: at hand (a fixed token, a fresh cached one) without a wait.
      const token = call.fresh ?? this.#tokens.peek() ?? (await tokenWait(this.#tokens.get(), call));
      call.tokens.push(token);
      // The call's headers are set here, not given to ky: ky would copy them into a new Headers three times per call.
      for (const name in headers) request.headers.set(name, headers[name] as string);
      request.headers.set('authorization', `Bearer ${token}`); // RFC 6750 §2.1
    };
    const kyOptions: KyOptions = {
      timeout: timeoutMs,
      retry: {
        limit: maxRetries + 1, // the 401's re-send is not a retry: `shouldRetry` counts the call's `maxRetries`
        methods: ALL_METHODS,
        shouldRetry: ({ error }) => this.#shouldRetry(call, error),
        delay: () => call.delayMs,
      },
      hooks: { beforeRequest: [turnAndToken] },
      // A redirect is answered, not followed (RedirectError): following would send the token and a write
      // elsewhere, and a 303 would turn it into a GET whose answer came back as the write's.
      redirect: 'manual',
      fetch: (request, init) => this.#attempt(call, request as Request, init), // ky always passes a Request
    };
    if (spec.method !== 'GET') kyOptions.method = spec.method;
    if (signal !== undefined) kyOptions.signal = signal;
    if (json !== undefined) kyOptions.body = jsonText(json, options.extraBody);
    return [call, kyOptions];
  }

  /**
   * ky's `fetch`, inside its time-out: one attempt, numbered by its token, told to every listener that is set
   * (attempt.ts), its answer then told to the rate limiter. Ended by ky's time-out even when the fetch ignores it.
   */
  async #attempt(call: Call<unknown>, request: Request, init: RequestInit | undefined): Promise<Response> {
    const { tokens } = call;
    const token = tokens[tokens.length - 1] as string;
    let response: Response;
    this.#sending++;
    try {
      response = await observe(this.#config, call, tokens.length, token, request.headers, (trace) => untilAborted(this.#fetch(withTraceHeaders(request, trace), init, call), request.signal, call));
    } finally {
      this.#sending--;
    }
    const limiter = this.#config.rateLimiter;
    const facts = answerFacts(response, call.window, this.#sending);
    call.blockedByThis = facts !== undefined && limiter.learn(this.#limitKey, facts, call.window) === true;
    if (!RETRY_STATUS_CODES.includes(response.status)) limiter.refill();
    return response;
  }

  /**
   * ky's `shouldRetry`: a 401 gets one newer token and one re-send at once; anything else is sent again by the rules
   * of retry.ts, after the wait they give, which `delay` hands to ky. `onRetry` is told before the wait.
   */
  async #shouldRetry(call: Call<unknown>, error: Error): Promise<boolean> {
    if (call.signal?.aborted === true) return false;
    const response = error instanceof HTTPError ? error.response : undefined;
    // A 401, once: a newer token and the call sent again at once (Assumptions table, "Errors"). A streamed upload
    // cannot be sent again, and a 401 that no newer token answers stands.
    if (response?.status === 401 && call.fresh === undefined && call.rules.bodyReplayable) {
      call.fresh = await tokenWait(this.#tokens.refresh(call.tokens[call.tokens.length - 1] as string), call);
      if (call.fresh !== undefined) {
        call.delayMs = 0;
        retrying(this.#config.hooks, call, call.tokens.length + 1, 0, 401);
        return true;
      }
    }
    const failure = response === undefined ? sdkError(error, call) : undefined;
    const delayMs = retryDelay(response, failure, call.retries, call.rules);
    // The retry budget (docs/requests.md "Retry budget"): empty, the call fails now with this error. A 429's retry
    // waits the service's word, held by the rate limiter: not drawn from it.
    if (delayMs === undefined || (response?.status !== 429 && !(await this.#config.rateLimiter.retry()))) return false;
    call.retries++;
    retrying(this.#config.hooks, call, call.tokens.length + 1, delayMs, response?.status, failure);
    // The call whose answer set the block goes again when it ends, to the millisecond; a call the block holds
    // otherwise waits for its turn in `beforeRequest`.
    call.delayMs = call.blockedByThis || this.#config.rateLimiter.waitMs(this.#limitKey) === 0 ? delayMs : 0;
    return true;
  }

  /** The attempt's fetch: fetch, and the answer's body read up to `maxResponseBytes`; fetch's failures typed. */
  async #fetch(request: Request, init: RequestInit | undefined, call: Call<unknown>): Promise<Response> {
    const { body } = call.spec;
    // A streamed body never goes through ky (its clone for retries would tee it: the idle branch would hold the whole
    // upload) and is attached here, with `redirect: 'error'`: in any other mode fetch clones the request, and so tees
    // the body, itself.
    const outgoing = body === undefined ? request : new Request(request, { body: body.create(request.signal), duplex: 'half', redirect: 'error' } as RequestInit);
    let status: number | undefined;
    const before = call.lost;
    // Handed to fetch: until a whole answer comes back, the service may have acted.
    call.lost = `no whole answer came within ${call.timeoutMs} ms of sending`;
    try {
      const answer = await this.#config.fetch(outgoing, init);
      status = answer.status;
      call.requestId = requestIdOf(answer, call.tokens);
      const read = await readBody(answer, this.#config.maxResponseBytes);
      call.lost = before;
      return read;
    } catch (error) {
      // An abort (the caller's, or the time-out) keeps its own error; so do the SDK's own (a body over the limit).
      if (request.signal.aborted || error instanceof PostSchedError) throw error;
      const detail = error instanceof Error ? describeNetworkError(error, call.tokens) : 'the fetch function failed';
      // A streamed upload is sent with redirect 'error' (above): fetch fails on a redirect without showing it.
      if (body !== undefined && /redirect/i.test(detail)) {
        throw new RedirectError(0, undefined, new Headers(), `The service answered the upload with a redirect, which the SDK does not follow (${detail}). If the API moved, set \`baseUrl\` to its new address.`);
      }
      // Anything else a fetch throws (the runtime's TypeError, or whatever a custom fetch builds, which may hold
      // the Request or its init) becomes a ConnectionError holding only a sanitized copy of its chain.
      // Once a status came, the request reached the service: saying "could not reach" would invite a second write.
      const failure = new ConnectionError(
        status === undefined
          ? `Could not reach ${this.#config.origin}: ${detail}. Check the base URL and the network.`
          : `${call.method} answered ${status}, then its body broke off: ${detail}. The service may have acted on it.`,
        { cause: sanitizeCause(error, 0, call.tokens) },
      );
      call.lost = status === undefined ? (requestNeverLeft(failure) ? before : `the answer was lost after the request was sent (${detail})`) : `answered ${status}, then its body broke off: ${detail}`;
      throw failure;
    }
  }
}

/** ky's `TimeoutError` holds the Request (the token): the SDK's replaces it. Any other error is the SDK's already. */
function sdkError(error: unknown, call: Call<unknown>): unknown {
  return isTimeoutError(error) ? new TimeoutError(call.timeoutMs) : error;
}

/**
 * The error of a write that may have reached the service (`isOutcomeUnknown`): the same class, saying so and what
 * to do, with the call's idempotency key and the request id if one came.
 */
function outcomeUnknown(failure: ConnectionError | TimeoutError, call: Call<unknown>): Error {
  const key = call.idempotencyKey;
  const message = `${call.method} ${call.route}: ${call.lost}. The service may have acted on it: ${
    key === undefined
      ? 'the call had no idempotencyKey, so it was not sent again; look for the result (posts.list) before sending it again.'
      : 'send it again with the same idempotencyKey.'
  }`;
  const error = failure instanceof TimeoutError ? new TimeoutError(failure.timeoutMs, message) : new ConnectionError(message, { cause: failure.cause });
  const fields: OutcomeUnknown = { outcomeUnknown: true, idempotencyKey: key, requestId: call.requestId };
  return Object.assign(error, fields);
}

/**
 * `promise`, or a rejection once `signal` (ky's: the time-out's, or the caller's) aborts: an attempt ends with its
 * time-out even when a custom fetch ignores the signal, so that its listeners are told it ended.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, call: Call<unknown>): Promise<T> {
  const ended = () => (call.signal?.aborted === true ? call.signal.reason : new TimeoutError(call.timeoutMs));
  if (signal.aborted) return Promise.reject(ended());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(ended());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** `request` with a trace subscriber's `traceparent` … (core/tracing.ts) set, never one that replaces the credentials. */
function withTraceHeaders(request: Request, trace: Readonly<Record<string, string>> | undefined): Request {
  if (trace !== undefined) for (const [name, value] of Object.entries(trace)) if (name.toLowerCase() !== 'authorization') request.headers.set(name, value);
  return request;
}

/** `url` with the query's defined parameters, as ky's `searchParams` would add them. */
function withQuery(url: string, query: Record<string, string | number | boolean | undefined> | undefined): string {
  if (query === undefined) return url;
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.append(name, String(value));
  const text = search.toString();
  return text === '' ? url : `${url}?${text}`;
}

/**
 * The JSON body as sent; what JSON cannot carry (a BigInt, a cycle) is a `ValidationError` before anything is sent,
 * naming `extraBody` when the call has one (the resources' own fields are checked), else a raw call's `body`.
 */
function jsonText(value: unknown, extraBody: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return invalidOption(extraBody === undefined ? 'body' : 'extraBody', 'cannot be sent as JSON (a BigInt, a cycle).');
  }
}

/**
 * A call's wait for its turn (`RateLimiter.take`): at once a `RateLimitError` (nothing sent) when longer than
 * `maxRetryAfterMs`; else the wait (plus its random spread), then the turn asked again. Ended by the caller's signal;
 * counted in the key's `queued`. Resolves with the quota window of the turn taken.
 */
async function waitTurn(limiter: RateLimiterLike, key: string, first: Turn | Promise<Turn>, call: Call<unknown>, origin: string): Promise<number> {
  const { signal, rules } = call;
  for (let turn = await first; ; turn = await limiter.take(key)) {
    const ms = turn.waitMs;
    if (ms <= 0) return turn.window;
    if (ms > rules.maxRetryAfterMs) {
      throw new RateLimitError(429, undefined, new Headers(), `Rate limited: the service asked to wait ${Math.ceil(ms / 1000)} s, longer than maxRetryAfterMs (${rules.maxRetryAfterMs} ms); nothing was sent. Try again after error.retryAt.`, ms);
    }
    const waitMs = ms + Math.random() * turn.spreadMs;
    publishWait(() => ({ method: call.method, route: call.route, origin, waitMs }));
    limiter.queue(key, 1);
    try {
      await sleep(waitMs, signal);
    } finally {
      limiter.queue(key, -1);
    }
  }
}

/**
 * A wait for a token (none at hand, or a newer one after a 401): bounded by the caller's signal and a time-out of its
 * own, `timeoutMs`, so that a slow token request does not eat the attempt's.
 */
function tokenWait<T>(promise: Promise<T>, { timeoutMs, signal }: Call<unknown>): Promise<T> {
  return within(promise, timeoutMs, signal, () => Promise.reject(new TimeoutError(timeoutMs)));
}

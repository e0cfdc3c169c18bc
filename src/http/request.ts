/**
 * The request pipeline, once for every resource, read top to bottom. It owns its retry loop instead of using ky's:
 * this service's rules decide every re-send (a POST only with an idempotency key, after a 429 or when the connection
 * never left; `Retry-After` to the millisecond, capped, else the call fails with the wait on its error; a streamed
 * body never twice), a 401 gets one token refresh and one re-send, each attempt reads the token again (one
 * refreshed during a wait is sent), and each attempt is told once to the logger, the hooks and the TracingChannel.
 * ky's `retry` can say none of that, so ky makes one attempt (`retry: 0`, `throwHttpErrors: false`): the request, the
 * time-out and the caller's signal, with fetch and the bounded read of the answer inside them (`#fetch`).
 *
 * A call: `#prepare` checks its options and builds what every attempt sends; then `#execute` loops, each attempt:
 * token → `#send` → ok? parse : 401 once? refresh the token, send again : retry? wait : throw.
 */
import type { Options as KyOptions } from 'ky';
import { isTimeoutError, ky, loadKy } from '#ky';
import { PostSchedError } from '../core/base-error.js';
import { readBody } from '../core/buffer-response.js';
import { ConnectionError, RateLimitError, RedirectError, TimeoutError } from '../core/errors.js';
import { checkOptions, integerOption, invalidOption, MAX_RETRIES, MAX_TIMEOUT_MS } from '../core/invalid-option.js';
import { describeNetworkError, sanitizeCause } from '../core/scrub.js';
import { sleep, within } from '../core/time-bound.js';
import { publishWait, traceCall } from '../core/tracing.js';
import { apiError, parse } from './answer.js';
import { APIPromise, type PipelineResult } from './api-promise.js';
import { observe, retrying, type ObservedCall } from './attempt.js';
import type { TokenSource } from './auth.js';
import { withExtraBody, withExtraQuery } from './extra-fields.js';
import { checkedHeaders, setChecked } from './headers.js';
import { clientOption, READ_OPTIONS, WRITE_OPTIONS, type PipelineConfig, type RequestSpec, type WriteRequestOptions } from './options.js';
import { retryDelay, type RetryRules } from './retry.js';
import { GO, type RateLimiter, type Turn } from './rate-limiter.js';

/** A call without options: on a null prototype, as `checkOptions` gives them (`Object.prototype.timeoutMs` is no option). */
const NO_OPTIONS: WriteRequestOptions = Object.freeze(Object.create(null));

/** A call as `#prepare` made it: what every attempt sends. Only `tokens` grows. */
interface Call<T> extends ObservedCall {
  readonly spec: RequestSpec<T>;
  /** The call's own headers (a body, an idempotency key, `headers`); `undefined`: the client's. */
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly timeoutMs: number;
  readonly rules: RetryRules;
  /** What ky takes; `headers` set by each attempt (they carry its token). */
  readonly ky: KyOptions;
  /** The token of each attempt sent so far: cut out of anything the server echoes; its length numbers the attempts. */
  readonly tokens: string[];
}

/** The request pipeline of one client. @internal */
export class Pipeline {
  readonly #config: PipelineConfig;
  readonly #tokens: TokenSource;
  /** The rate limiter's key of this client's calls (its user). */
  readonly #limitKey: string;
  #tokenHeaders: { token: string; headers: Readonly<Record<string, string>> } | undefined;
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
    const call = this.#prepare(typeof specOrBuild === 'function' ? specOrBuild() : specOrBuild);
    // The call on `postsched:call`: its token requests and attempts happen inside it.
    return traceCall(() => ({ method: call.method, route: call.route, origin: this.#config.origin }), () => this.#attempts(call));
  }

  async #attempts<T>(call: Call<T>): Promise<PipelineResult<T>> {
    const { signal, tokens } = call;
    const limiter = this.#config.rateLimiter;
    const key = this.#limitKey;
    let fresh: string | undefined; // what the refresh after a 401 gave: sent from then on
    for (let retries = 0; ; ) {
      let response: Response | undefined;
      let failure: unknown;
      let blockedByThis = false; // this call's answer set the user's block
      // The user's turn: at once (a Map lookup) unless the service told its calls to wait, or the requests its
      // quota allows until the reset are all taken; `window`: the quota window this call counts in (0: none).
      const turn = limiter.take(key);
      const window = turn === GO ? 0 : await waitTurn(limiter, key, turn, call, this.#config.origin);
      try {
        // The token, before the attempt's time-out starts: at hand (a fixed token, a fresh cached one) without a wait.
        const token = fresh ?? this.#tokens.peek() ?? (await tokenWait(this.#tokens.get(), call));
        this.#sending++;
        try {
          response = await this.#send(call, token, tokens.push(token));
        } finally {
          this.#sending--;
        }
        blockedByThis = limiter.learn(key, response, window, this.#sending);
        // A 401, once: a newer token and the call sent again at once (Assumptions table, "Errors"). A streamed upload
        // cannot be sent again, and a 401 that no newer token answers stands.
        if (response.status === 401 && fresh === undefined && call.rules.bodyReplayable) {
          fresh = await tokenWait(this.#tokens.refresh(token), call);
          if (fresh !== undefined) {
            retrying(this.#config.hooks, call, tokens.length + 1, 0, 401);
            continue;
          }
        }
      } catch (error) {
        response = undefined;
        failure = error;
      }
      // Like fetch, an aborted call rejects with the signal's reason (an AbortError unless the caller gave one).
      if (signal?.aborted === true) throw signal.reason;
      if (response?.ok === true) {
        this.#answered = true;
        return parse(call.spec, response, tokens);
      }
      const delayMs = retryDelay(response, failure, retries, call.rules);
      if (delayMs === undefined) {
        throw response === undefined ? failure : apiError(response, tokens, this.#answered ? undefined : { baseUrl: this.#config.baseUrl, spec: call.spec });
      }
      retries++;
      retrying(this.#config.hooks, call, tokens.length + 1, delayMs, response?.status, failure);
      // The call whose answer set the block goes again when it ends, to the millisecond; a call the block holds
      // otherwise waits for its turn at the top of the loop.
      if (blockedByThis || limiter.waitMs(key) === 0) await sleep(delayMs, signal);
    }
  }

  /** The call's options checked, and what every attempt sends built once: the URL with its query, headers, body. */
  #prepare<T>(spec: RequestSpec<T>): Call<T> {
    const config = this.#config;
    const options: WriteRequestOptions = spec.options === undefined ? NO_OPTIONS : checkOptions(spec.options, spec.method === 'GET' ? READ_OPTIONS : WRITE_OPTIONS, 'this call', clientOption);
    const { signal, idempotencyKey } = options;
    // ky would fail on anything else with a TypeError of its own (AbortSignal.any takes only AbortSignals).
    if (signal != null && !(signal instanceof AbortSignal)) invalidOption('signal', 'must be an AbortSignal.');
    signal?.throwIfAborted();
    const timeoutMs = integerOption(options.timeoutMs, 'timeoutMs', config.timeoutMs, 1, MAX_TIMEOUT_MS);
    const maxRetries = integerOption(options.maxRetries, 'maxRetries', config.maxRetries, 0, MAX_RETRIES);

    // The client's headers are computed once (#withToken); a call with its own, or with a body, gets a copy.
    let headers: Record<string, string> | undefined;
    if (options.headers !== undefined || idempotencyKey !== undefined || spec.body !== undefined || spec.json !== undefined) {
      const own = checkedHeaders(options.headers, 'headers');
      if (idempotencyKey !== undefined) setChecked(own, 'idempotency-key', idempotencyKey, 'idempotencyKey');
      if (spec.body !== undefined) own.set('content-type', spec.body.contentType);
      headers = { ...config.headers, ...Object.fromEntries(own), accept: 'application/json' };
      if (spec.json !== undefined) headers['content-type'] ??= 'application/json';
    }
    const json = options.extraBody === undefined ? spec.json : withExtraBody(spec.json, options.extraBody);
    const query = options.extraQuery === undefined ? spec.query : withExtraQuery(spec.query, options.extraQuery);

    // Only what differs from ky's defaults: ky copies every key it is given on every attempt.
    const kyOptions: KyOptions = {
      timeout: timeoutMs,
      retry: 0, // the loop decides every retry
      throwHttpErrors: false, // and reads every status itself
      // A redirect is answered, not followed (RedirectError): following would send the headers and a write
      // elsewhere, and a 303 would turn it into a GET whose answer came back as the write's.
      redirect: 'manual',
      fetch: (request, init) => this.#fetch(request as Request, init, call), // ky always passes a Request
    };
    if (spec.method !== 'GET') kyOptions.method = spec.method;
    if (signal !== undefined) kyOptions.signal = signal;
    if (json !== undefined) kyOptions.body = jsonText(json, options.extraBody);
    const call: Call<T> = {
      method: spec.method,
      route: spec.route,
      // The full URL, not ky's prefixUrl and searchParams: one string, built once for every attempt.
      url: withQuery(`${config.baseUrl}/${spec.path}`, query),
      signal,
      spec,
      headers,
      timeoutMs,
      rules: {
        method: spec.method,
        hasIdempotencyKey: idempotencyKey !== undefined,
        bodyReplayable: spec.body?.replayable ?? true,
        maxRetryAfterMs: config.maxRetryAfterMs,
        maxRetries,
      },
      ky: kyOptions,
      tokens: [],
    };
    return call;
  }

  /** One attempt, numbered `attempt`, with `token` (RFC 6750 §2.1), told to every listener that is set (attempt.ts). */
  #send(call: Call<unknown>, token: string, attempt: number): Promise<Response> {
    const headers = call.headers === undefined ? this.#withToken(token) : { ...call.headers, authorization: `Bearer ${token}` };
    return observe(this.#config, call, attempt, token, headers, (trace) => this.#exchange(call, trace === undefined ? headers : withTraceHeaders(headers, trace)));
  }

  /**
   * The client's headers with the token: the same object while the token is the same. Built by `Object.assign`, not
   * a spread of the shared headers: once objects of the same names in the same order have been built key by key and
   * grown (undici's fetch builds one per request), V8 gives each spread copy a hidden class of its own: about 300
   * bytes more per client kept (a `UserClients` user).
   */
  #withToken(token: string): Readonly<Record<string, string>> {
    if (this.#tokenHeaders?.token !== token) this.#tokenHeaders = { token, headers: Object.assign({}, this.#config.headers, { authorization: `Bearer ${token}` }) };
    return this.#tokenHeaders.headers;
  }

  /** ky: the request, its time-out and the caller's signal around `#fetch`. Its TimeoutError holds the Request (the token): the SDK's replaces it. */
  async #exchange(call: Call<unknown>, headers: Readonly<Record<string, string>>): Promise<Response> {
    // `#ky` (package.json "imports"): evaluated with the SDK in Web builds, on the first call under Node
    // (http/ky.node.ts), synchronously either way: the first call waits on no I/O that a fake clock would not drive.
    if (ky === undefined) loadKy();
    try {
      // ky copies its options before it reads them: the call's own object, with this attempt's headers, is not kept.
      call.ky.headers = headers;
      return await ky!(call.url, call.ky);
    } catch (error) {
      throw isTimeoutError(error) ? new TimeoutError(call.timeoutMs) : error;
    }
  }

  /** ky's `fetch`, inside its time-out: fetch, and the answer's body read up to `maxResponseBytes`; fetch's failures typed. */
  async #fetch(request: Request, init: RequestInit | undefined, call: Call<unknown>): Promise<Response> {
    const { body } = call.spec;
    // A streamed body never goes through ky (its clone for retries would tee it: the idle branch would hold the whole
    // upload) and is attached here, with `redirect: 'error'`: in any other mode fetch clones the request, and so tees
    // the body, itself.
    const outgoing = body === undefined ? request : new Request(request, { body: body.create(request.signal), duplex: 'half', redirect: 'error' } as RequestInit);
    let status: number | undefined;
    try {
      const answer = await this.#config.fetch(outgoing, init);
      status = answer.status;
      return await readBody(answer, this.#config.maxResponseBytes);
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
      throw new ConnectionError(
        status === undefined
          ? `Could not reach ${this.#config.origin}: ${detail}. Check the base URL and the network.`
          : `${call.method} answered ${status}, then its body broke off: ${detail}. The service may have acted on it.`,
        { cause: sanitizeCause(error, 0, call.tokens) },
      );
    }
  }
}

/** `headers` with a trace subscriber's `traceparent` … (tracing.ts), never one that replaces the credentials. */
function withTraceHeaders(headers: Readonly<Record<string, string>>, trace: Readonly<Record<string, string>>): Record<string, string> {
  const sent = { ...headers };
  for (const [name, value] of Object.entries(trace)) if (name.toLowerCase() !== 'authorization') sent[name.toLowerCase()] = value;
  return sent;
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
async function waitTurn(limiter: RateLimiter, key: string, first: Turn | Promise<Turn>, call: Call<unknown>, origin: string): Promise<number> {
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

/**
 * `PostSched`: the client. It checks its options, builds the one request pipeline and hangs the
 * resources on it.
 */
import type { PostSchedOptions, PostSchedOverrides } from './client-options.js';
import { CLIENT_SETUP, setUpClient, type ClientSetup } from './client-setup.js';
import { toTokenSource, type Auth } from './http/auth.js';
import type { APIPromise } from './http/api-promise.js';
import { checkedQuery } from './http/extra-fields.js';
import { checkedHeaders } from './http/headers.js';
import { rawSpec, type RawRequestOptions, type RawWriteOptions } from './http/raw.js';
import type { RequestOptions } from './http/options.js';
import { Pipeline } from './http/request.js';
import { paginateShape, Paginator, pageParser, type ListParams } from './resources/pagination.js';
import { checkInput } from './resources/validate.js';
import { Accounts } from './resources/accounts.js';
import { Analytics } from './resources/analytics.js';
import { Media } from './resources/media.js';
import { Posts } from './resources/posts.js';
import { checkOptions, constructorOptions, invalidOption, optionalFunction } from './core/invalid-option.js';
import { inspectAs } from './oauth/inspect.js';
import type { RateLimitState } from './http/rate-limiter.js';

export type { Auth } from './http/auth.js';
export type { Logger } from './http/logger.js';
export { APIPromise, type WithResponse } from './http/api-promise.js';
export type { Hooks, RequestHookInfo, ResponseHookInfo, RetryHookInfo } from './http/hooks.js';
export type { RawQuery, RawRequestOptions, RawWriteOptions } from './http/raw.js';
export type { RateLimitInfo } from './core/rate-limit.js';
export { RateLimiter, type RateLimiterLike, type RateLimiterOptions, type RateLimitEvent, type RateLimitState } from './http/rate-limiter.js';
export { CALL_CHANNEL, REQUEST_CHANNEL, WAIT_CHANNEL, type CallTrace, type RequestTrace, type WaitTrace } from './core/tracing.js';
export { SDK_VERSION, type AppInfo } from './core/user-agent.js';
export type { HeadersInput, RequestOptions, WriteRequestOptions } from './http/options.js';
export type { UploadFile, UploadProgress, NodeReadableLike } from './http/multipart.js';

export type { PostSchedOptions, PostSchedOverrides } from './client-options.js';

/** Options of `client.paginate`: the list options, a query, and how to read each item. */
export interface RawListOptions<T = unknown> extends ListParams, Omit<RawRequestOptions, 'parse'> {
  /** Checks and types each item of `data` (throw to refuse it); without it items are returned as parsed. */
  parseItem?: (item: unknown) => T;
}

/**
 * The Post Scheduling Service client.
 *
 * @example
 * import { PostSched } from '@postsched/sdk'
 *
 * const client = new PostSched({ baseUrl: 'https://api.postsched.example', auth: tokenManager })
 * const post = await client.posts.create({ account_ids: ['acc_1'], publish_at: new Date(Date.now() + 3_600_000), text: 'Hi' })
 * for await (const account of client.accounts.list()) console.log(account.name)
 */
export class PostSched {
  readonly #setup: ClientSetup;
  readonly #auth: Auth;
  readonly #pipeline: Pipeline;
  readonly #limitKey: string;
  // Made on first use: a client per user (UserClients) costs little until it is used.
  #posts: Posts | undefined;
  #accounts: Accounts | undefined;
  #media: Media | undefined;
  #analytics: Analytics | undefined;

  constructor(options: PostSchedOptions) {
    constructorOptions(options, undefined, 'new PostSched()', '{ baseUrl, auth }');
    // UserClients passes the setup it made once for all its users; anyone else's options are checked here.
    const shared = (options as { [CLIENT_SETUP]?: ClientSetup })[CLIENT_SETUP];
    const setup = shared ?? setUpClient(options);
    this.#setup = setup;
    this.#auth = (shared === undefined ? setup.options : options).auth as Auth;
    // A UserClients user's manager names its user; a lone client is `default` (or the limiter's `key`).
    const userId = (options.auth as { userId?: unknown } | undefined)?.userId;
    this.#limitKey = setup.config.rateLimiter.keyOf(typeof userId === 'string' ? userId : 'default');
    this.#pipeline = new Pipeline(setup.config, toTokenSource(options.auth), this.#limitKey);
    inspectAs(this, describeClient);
  }

  /**
   * This client's rate-limit state: until when its calls wait after the service said to slow down (shared with
   * every client of the same user and limiter), and how many wait.
   */
  get rateLimit(): RateLimitState {
    return this.#setup.config.rateLimiter.state(this.#limitKey);
  }

  /** Schedule, read, change, cancel and list posts. */
  get posts(): Posts {
    return (this.#posts ??= Posts.create(this.#pipeline));
  }

  /** The user's connected social accounts. */
  get accounts(): Accounts {
    return (this.#accounts ??= Accounts.create(this.#pipeline));
  }

  /** Streamed uploads to the media library. */
  get media(): Media {
    return (this.#media ??= Media.create(this.#pipeline));
  }

  /** Post-level analytics. */
  get analytics(): Analytics {
    return (this.#analytics ??= Analytics.create(this.#pipeline));
  }

  /**
   * A copy of this client with some options changed (a shorter time-out, no retries, extra headers, other hooks),
   * sharing the base URL and the auth (the same TokenManager, so one refresh serves both). Cheap: make one per
   * request if you like. Headers are merged, a name given here replacing the original's.
   *
   * @example
   * const fast = client.withOptions({ timeoutMs: 2_000, maxRetries: 0 })
   * await fast.posts.get('post_1')
   */
  withOptions(overrides: PostSchedOverrides): PostSched {
    if (typeof overrides !== 'object' || overrides === null) invalidOption('overrides', 'must be an object of client options.');
    // Unknown names are refused by the new client's check.
    const own: Partial<PostSchedOptions> = checkOptions(overrides);
    // Not ignored in silence: a copy pointed elsewhere would carry this client's token there.
    for (const name of ['baseUrl', 'auth'] as const) {
      if (own[name] !== undefined) invalidOption(name, 'is kept by withOptions(): create a new PostSched.');
    }
    const { options, config } = this.#setup;
    const headers = checkedHeaders(options.headers, 'headers');
    if (own.headers !== undefined) checkedHeaders(own.headers, 'headers').forEach((value, name) => headers.set(name, value));
    const rateLimiter = own.rateLimiter ?? config.rateLimiter; // the copy shares the backoff
    return new PostSched({ ...options, ...own, headers, rateLimiter, baseUrl: config.baseUrl, auth: this.#auth });
  }

  /**
   * GET an endpoint the SDK does not cover yet, through the same pipeline (auth, refresh on 401, retries,
   * time-outs, typed errors). `path` is relative to the base URL, with or without a leading `/`; absolute URLs
   * and other hosts are refused.
   *
   * @example
   * const endpoints = await client.get<{ data: WebhookEndpoint[] }>('/webhook-endpoints', { query: { limit: 10 } })
   */
  get<T = unknown>(path: string, options?: RawRequestOptions<T>): APIPromise<T> {
    return this.#pipeline.request(() => rawSpec<T>('GET', path, options));
  }

  /**
   * POST to an endpoint the SDK does not cover yet; `body` is sent as JSON. Retried only with an `idempotencyKey`
   * (or after a 429, or when the request never left), like every write.
   *
   * @example
   * await client.post('/webhook-endpoints', { body: { url: 'https://app.example/hooks' }, idempotencyKey: crypto.randomUUID() })
   */
  post<T = unknown>(path: string, options?: RawWriteOptions<T>): APIPromise<T> {
    return this.#pipeline.request(() => rawSpec<T>('POST', path, options));
  }

  /**
   * PUT to an endpoint the SDK does not cover yet (idempotent: retried like a GET).
   *
   * @example
   * await client.put('/webhook-endpoints/we_1', { body: { url: 'https://app.example/hooks' } })
   */
  put<T = unknown>(path: string, options?: RawWriteOptions<T>): APIPromise<T> {
    return this.#pipeline.request(() => rawSpec<T>('PUT', path, options));
  }

  /**
   * PATCH an endpoint the SDK does not cover yet (retried only with an `idempotencyKey`).
   *
   * @example
   * await client.patch('/webhook-endpoints/we_1', { body: { enabled: false } })
   */
  patch<T = unknown>(path: string, options?: RawWriteOptions<T>): APIPromise<T> {
    return this.#pipeline.request(() => rawSpec<T>('PATCH', path, options));
  }

  /**
   * DELETE on an endpoint the SDK does not cover yet (idempotent: retried like a GET).
   *
   * @example
   * await client.delete('/webhook-endpoints/we_1')
   */
  delete<T = unknown>(path: string, options?: RawWriteOptions<T>): APIPromise<T> {
    return this.#pipeline.request(() => rawSpec<T>('DELETE', path, options));
  }

  /**
   * Walks a cursor-paginated list the SDK does not cover yet, as its own lists are walked (`?limit=&cursor=` in,
   * `{ data, next_cursor }` out): `for await`, `.pages()`, `{ limit }`, `.toArray()`.
   *
   * @example
   * for await (const endpoint of client.paginate<WebhookEndpoint>('/webhook-endpoints', { pageSize: 50 })) console.log(endpoint)
   */
  paginate<T = unknown>(path: string, options: RawListOptions<T> = {}): Paginator<T> {
    const { limit, pageSize, query, parseItem, ...requestOptions } = checkOptions(options);
    checkInput({ limit, pageSize }, paginateShape);
    optionalFunction(parseItem, 'parseItem');
    if (query !== undefined) checkedQuery(query, 'query');
    const parsePage = pageParser<unknown>('a page');
    const parse = parseItem === undefined ? parsePage : (body: unknown) => {
      const page = parsePage(body);
      return { ...page, data: page.data.map((item) => parseItem(item)) };
    };
    const base = rawSpec<unknown>('GET', path);
    return Paginator.create<T>(
      (pageQuery, opts) => this.#pipeline.request({ ...base, query: { ...query, ...pageQuery }, parse, options: opts }) as never,
      { ...(limit === undefined ? {} : { limit }), ...(pageSize === undefined ? {} : { pageSize }) },
      requestOptions as RequestOptions,
    );
  }

  /** Only the base URL: the auth (a token, or a manager holding a refresh token) never shows. */
  toJSON(): {
    /** The base URL. */
    baseUrl: string;
  } {
    return { baseUrl: this.#setup.config.baseUrl };
  }
}

/** The client's `util.inspect` view (see inspectAs): one function for every client, called on the client. */
function describeClient(this: PostSched): string {
  return `PostSched { baseUrl: '${this.toJSON().baseUrl}' }`;
}

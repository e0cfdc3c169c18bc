/**
 * The promise every API method returns: await it for the parsed data, or call `.withResponse()` for the
 * raw `Response` and the request id too (the openai-node pattern).
 */

import { readableCopy } from '../core/buffer-response.js';
import { parseRateLimit, type RateLimitInfo } from '../core/rate-limit.js';

/** What the pipeline resolves with: the data, its answer, the request id (`withResponse()` adds `rateLimit`). @internal */
export type PipelineResult<T> = Omit<WithResponse<T>, 'rateLimit'>;

/** The parsed data with the HTTP answer it came from. */
export interface WithResponse<T> {
  /** The parsed, validated result: what awaiting the call gives. */
  data: T;
  /** The final answer (after retries). Its body is still unread. */
  response: Response;
  /** `x-request-id` of the answer: what the service's support asks for. */
  requestId: string | undefined;
  /** What the answer's `RateLimit-*` / `X-RateLimit-*` headers say; `undefined` when it sent none. */
  rateLimit: RateLimitInfo | undefined;
}

/**
 * A `Promise<T>` with `.withResponse()`.
 *
 * @example
 * const post = await client.posts.get('post_1')
 * const { data, response, requestId } = await client.posts.get('post_1').withResponse()
 * console.log(response.status, requestId)
 */
export class APIPromise<T> extends Promise<T> {
  readonly #result: Promise<PipelineResult<T>>;
  #withResponse: Promise<WithResponse<T>> | undefined;

  /** Not for you to build (`new APIPromise()` does not compile): the API methods return one. */
  private constructor(result: Promise<PipelineResult<T>>) {
    // The base promise is never observed: `then` is redirected to the real result below.
    super(settled);
    this.#result = result;
  }

  /** Made by the pipeline. @internal */
  static create<T>(result: Promise<PipelineResult<T>>): APIPromise<T> {
    return new APIPromise(result);
  }

  // Promises derived with then/catch/finally are plain Promises (no second executor call on this class).
  /** `then`, `catch` and `finally` return plain Promises. */
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  /** The data together with the raw `Response` and the request id. */
  withResponse(): Promise<WithResponse<T>> {
    // The rate-limit headers are read, and a readable copy of the answer built, only for a caller who asks.
    return (this.#withResponse ??= this.#result.then((result) => ({
      ...result,
      response: readableCopy(result.response),
      rateLimit: parseRateLimit(result.response.headers),
    })));
  }

  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    // One promise, not two: the data goes straight to the caller's callback.
    return this.#result.then(
      onfulfilled == null ? (result) => result.data as unknown as R1 : (result) => onfulfilled(result.data),
      onrejected,
    );
  }
}

/** The executor of the base promise (one function for every call, not a closure per call). */
function settled(resolve: (value: never) => void): void {
  resolve(undefined as never);
}

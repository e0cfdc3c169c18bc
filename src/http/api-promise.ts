/**
 * The promise every API method returns: await it for the parsed data, or call `.withResponse()` for the
 * raw `Response` and the request id too (the openai-node pattern).
 */

/** The parsed data with the HTTP answer it came from. */
export interface WithResponse<T> {
  data: T;
  /** The final answer (after retries). Its body is still unread. */
  response: Response;
  /** `x-request-id` of the answer: what the service's support asks for. */
  requestId: string | undefined;
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
  readonly #result: Promise<WithResponse<T>>;

  constructor(result: Promise<WithResponse<T>>) {
    // The base promise is never observed: `then` is redirected to the real result below.
    super((resolve) => resolve(undefined as T));
    this.#result = result;
  }

  // Promises derived with then/catch/finally are plain Promises (no second executor call on this class).
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  /** The data together with the raw `Response` and the request id. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#result;
  }

  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#result.then((result) => result.data).then(onfulfilled, onrejected);
  }
}

/**
 * @internal
 * A request body the pipeline can (re)create per attempt. ky clones every request before sending it
 * (to be able to retry), and cloning a streamed body tees it: the idle branch would hold every byte of a
 * large upload in memory. So a streamed body never goes through ky: ky sends a body-less request and the
 * attempt (`#fetch` in request.ts) attaches a fresh stream from `create()`.
 */
export interface BodySource {
  /** `content-type` of the body, with its parameters (`multipart/form-data; boundary=…`). */
  readonly contentType: string;
  /** True when `create()` can be called again for a retry (a Blob or bytes); false for a one-shot stream. */
  readonly replayable: boolean;
  /** A new stream of the body's bytes for one attempt; it stops reading its source when `signal` aborts. */
  create(signal?: AbortSignal): ReadableStream<Uint8Array>;
}

/**
 * A pull-based stream over an async iterator: nothing is read before the consumer asks
 * (`highWaterMark: 0`), and cancelling the stream ends the iterator, which releases its source.
 * `signal` ends it too: fetch does not cancel a request body it is reading when the request is aborted
 * (the Fetch standard's cancel fails on a locked stream), so without it an aborted upload would go on
 * reading the whole file. The listener is removed as soon as the stream ends either way.
 *
 * @internal
 */
export function streamFromIterator(iterator: AsyncIterator<Uint8Array>, signal?: AbortSignal): ReadableStream<Uint8Array> {
  let stop: (() => void) | undefined;
  const release = () => {
    if (stop !== undefined) signal?.removeEventListener('abort', stop);
    stop = undefined;
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (signal === undefined) return;
        stop = () => {
          release();
          controller.error(signal.reason);
          void iterator.return?.()?.catch(() => undefined);
        };
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      },
      async pull(controller) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await iterator.next();
        } catch (error) {
          release();
          throw error;
        }
        if (signal?.aborted === true) return;
        if (next.done === true) {
          release();
          controller.close();
        } else controller.enqueue(next.value);
      },
      async cancel() {
        release();
        await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * A request body the pipeline can (re)create per attempt. ky clones every request before sending it
 * (to be able to retry), and cloning a streamed body tees it: the idle branch would hold every byte of a
 * large upload in memory. So a streamed body never goes through ky: ky sends a body-less request and the
 * attempt function (attempt.ts) attaches a fresh stream from `create()`.
 */
export interface BodySource {
  /** `content-type` of the body, with its parameters (`multipart/form-data; boundary=…`). */
  readonly contentType: string;
  /** True when `create()` can be called again for a retry (a Blob or bytes); false for a one-shot stream. */
  readonly replayable: boolean;
  /** A new stream of the body's bytes for one attempt. */
  create(): ReadableStream<Uint8Array>;
}

/**
 * A pull-based stream over an async iterator: nothing is read before the consumer asks
 * (`highWaterMark: 0`), and cancelling the stream ends the iterator, which releases its source.
 */
export function streamFromIterator(iterator: AsyncIterator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await iterator.next();
        if (next.done === true) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Reads an answer's body whole, up to a limit (shared by the token requests in src/oauth and the API requests
 * in src/http: one copy in the bundle). The limit counts the bytes as they arrive from the body stream, which
 * fetch has already decompressed, so a small gzip bomb is stopped at the limit too; past it the stream is
 * cancelled (the connection is dropped) and nothing more is read.
 */
import { ResponseTooLargeError } from './errors.js';

/** Null-body statuses (Fetch standard): a Response with one of these cannot be given a body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The bytes of each buffered answer, kept on the Response itself under a symbol, so the pipeline reads them without
 * cloning it (a tee); a property is cheaper per call than a WeakMap entry.
 */
const BYTES: unique symbol = Symbol('postsched.bytes');
type Buffered = Response & { [BYTES]?: Uint8Array };
const decoder = new TextDecoder();

/**
 * Reads the response's body whole, so that a connection dropped mid-body fails here (inside the caller's time-out
 * and error mapping), not later in a JSON parser, and keeps the bytes beside it: the same Response object is
 * returned, its body consumed (no second Response is built on the hot path; `readableCopy` makes one for a caller
 * who asks). A body over `maxBytes` (after decompression) throws `ResponseTooLargeError`, the rest never read.
 */
export async function readBody(response: Response, maxBytes: number): Promise<Response> {
  if (!NULL_BODY_STATUSES.has(response.status) && response.body !== null) (response as Buffered)[BYTES] = await readCapped(response, maxBytes, undefined);
  return response;
}

/** A Response whose body can still be read, rebuilt from the bytes `readBody` kept (for `withResponse()`). */
export function readableCopy(response: Response): Response {
  const bytes = (response as Buffered)[BYTES];
  if (bytes === undefined) return response;
  return new Response(bytes as Uint8Array<ArrayBuffer>, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * A new Response with the body read whole, bounded as `readBody` reads it: for oauth4webapi, which reads the
 * token answer itself.
 */
export async function bufferResponse(response: Response, maxBytes: number, hint?: string): Promise<Response> {
  const body = NULL_BODY_STATUSES.has(response.status) || response.body === null ? null : await readCapped(response, maxBytes, hint);
  const buffered = new Response(body as Uint8Array<ArrayBuffer> | null, { status: response.status, statusText: response.statusText, headers: response.headers });
  if (body !== null) (buffered as Buffered)[BYTES] = body;
  return buffered;
}

function readCapped(response: Response, maxBytes: number, hint: string | undefined): Promise<Uint8Array> {
  const stream = response.body as ReadableStream<Uint8Array>;
  const over = () => {
    throw new ResponseTooLargeError(maxBytes, response.status, hint);
  };
  // Content-Length is the size on the wire: a plain body announced over the limit is refused unread. Every other body
  // is counted as it arrives, even one announced within the limit: a custom fetch (or a runtime's) may hand over a
  // Response whose Content-Length says less than its body holds.
  if (Number(response.headers.get('content-length') ?? NaN) > maxBytes && !response.headers.has('content-encoding')) {
    stream.cancel().catch(noop);
    return Promise.resolve().then(over);
  }
  return readStream(stream, maxBytes, over);
}

/**
 * The bytes of `stream`, at most `limit` of them: past that it is cancelled (the rest never read) and the answer is
 * what `over()` gives (or throws). The one capped read: API and token answers here, the fake service's request
 * bodies, webhook deliveries (src/webhooks/body.ts).
 */
export async function readStream<T = undefined>(stream: ReadableStream<Uint8Array>, limit: number, over: () => T = noop as () => T): Promise<Uint8Array | T> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  for (let size = 0, next; !(next = await reader.read()).done; chunks.push(next.value)) {
    if ((size += next.value.byteLength) > limit) {
      // Not awaited: a stream whose cancel never settles (msw's mocked answers) must not turn this into a time-out.
      reader.cancel().catch(noop);
      return over();
    }
  }
  // One chunk (a small answer) as it came; more are joined by the runtime.
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : new Uint8Array(await new Blob(chunks as Uint8Array<ArrayBuffer>[]).arrayBuffer());
}

function noop(): void {}

/**
 * The text of an answer `readBody` or `bufferResponse` read (`''` for one without a body), at once: the pipeline
 * parses it without another promise.
 */
export function responseText(response: Response): string {
  const bytes = (response as Buffered)[BYTES];
  // UTF-8 with the BOM stripped, as Response.text() decodes.
  return bytes === undefined ? '' : decoder.decode(bytes);
}

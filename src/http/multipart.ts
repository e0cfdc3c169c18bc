/**
 * A streamed multipart/form-data body (RFC 7578) with one file part. The file is never read whole into
 * memory: its chunks are handed to fetch one at a time, and `onProgress` counts them as they go.
 * Works with a Blob/File, a Uint8Array, a web ReadableStream or a Node Readable (recognised by shape, so
 * this file needs no `node:` import and stays usable in every runtime).
 *
 * Why not `FormData`: fetch would read a FormData body as a whole Blob, which a stream cannot be turned
 * into without buffering it; and ky's `onUploadProgress` counts body bytes (boundary included) against a
 * total it cannot know for a stream. We count the file's own bytes, so `loaded` ends at the file size.
 */
import { streamFromIterator, type BodySource } from './body.js';
import { randomHex } from '../core/bytes.js';
import { invalidOption } from '../core/invalid-option.js';

/** A Node `Readable` (fs.createReadStream …), recognised structurally: async-iterable with `pipe`. */
export interface NodeReadableLike extends AsyncIterable<unknown> {
  /** Present on every Node stream; only used to recognise one. */
  pipe: (...args: never[]) => unknown;
  /** `true` once the stream was read to its end: such a stream cannot be uploaded (again). */
  readonly readableEnded?: boolean;
  /** `true` once the stream was destroyed: it cannot be uploaded. */
  readonly destroyed?: boolean;
}

/** What `media.upload` accepts as the file's bytes. */
export type UploadFile = Blob | Uint8Array | ReadableStream<Uint8Array> | NodeReadableLike;

/** Bytes of the file sent so far; `total` is known for a Blob or a Uint8Array. */
export interface UploadProgress {
  /** Bytes of the file sent so far. */
  loaded: number;
  /** The file's size, when known before sending. */
  total?: number;
}

/** @internal */
export interface MultipartFile {
  /** Form field name (the service expects `file`). */
  field: string;
  file: UploadFile;
  filename: string;
  contentType: string;
  onProgress?: ((progress: UploadProgress) => void) | undefined;
  /** Text parts sent before the file (the `extraBody` of an upload). */
  fields?: Readonly<Record<string, string>> | undefined;
}

const CHUNK_SIZE = 64 * 1024;
const encoder = /* @__PURE__ */ new TextEncoder();

/**
 * The body of a one-file multipart/form-data request.
 *
 * @example
 * const body = multipartBody({ field: 'file', file: blob, filename: 'a.png', contentType: 'image/png' })
 * await fetch(url, { method: 'POST', body: body.create(), headers: { 'content-type': body.contentType }, duplex: 'half' })
 *
 * @internal
 */
export function multipartBody(part: MultipartFile): BodySource {
  checkUploadFile(part.file);
  if (/[\r\n\0]/.test(part.contentType) || !/^[\x20-\x7E]+\/[\x20-\x7E]+$/.test(part.contentType)) {
    invalidOption('contentType', 'must be a MIME type such as "video/mp4", without line breaks.');
  }
  const boundary = `postsched-${randomHex(16)}`;
  // RFC 7578 §4.2, with the WHATWG HTML escaping of `"`, CR and LF in names and filenames.
  let text = '';
  for (const [name, value] of Object.entries(part.fields ?? {})) {
    text += `--${boundary}\r\nContent-Disposition: form-data; name="${escapeQuoted(name)}"\r\n\r\n${value}\r\n`;
  }
  const head = encoder.encode(
    text +
      `--${boundary}\r\n` +
      `Content-Disposition: form-data; name="${escapeQuoted(part.field)}"; filename="${escapeQuoted(part.filename)}"\r\n` +
      `Content-Type: ${part.contentType}\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const total = knownSize(part.file);
  const replayable = total !== undefined;
  let created = false;
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    replayable,
    create(signal) {
      if (created && !replayable) {
        invalidOption('file', 'is a stream, sent only once: pass a Blob or Uint8Array to allow retries.');
      }
      created = true;
      return streamFromIterator(multipartChunks(part, head, tail, total), signal);
    },
  };
}

async function* multipartChunks(
  part: MultipartFile,
  head: Uint8Array,
  tail: Uint8Array,
  total: number | undefined,
): AsyncGenerator<Uint8Array> {
  yield head;
  let loaded = 0;
  for await (const chunk of fileChunks(part.file)) {
    // Large chunks (a Blob may come as one) are cut so that progress moves smoothly.
    for (let offset = 0; offset < chunk.byteLength; offset += CHUNK_SIZE) {
      const piece = chunk.subarray(offset, offset + CHUNK_SIZE);
      yield piece;
      // The generator resumes when the consumer pulls again, so the piece has gone out by now.
      loaded += piece.byteLength;
      report(part.onProgress, total === undefined ? { loaded } : { loaded, total });
    }
  }
  yield tail;
}

function report(onProgress: MultipartFile['onProgress'], progress: UploadProgress): void {
  try {
    onProgress?.(progress);
  } catch {
    // A failing progress callback (a UI bug) must not abort a 2 GB upload; it would surface as a
    // confusing network error from fetch.
  }
}

/** The file's bytes in chunks, releasing the source (reader lock, Node stream) when iteration stops early. */
async function* fileChunks(file: UploadFile): AsyncGenerator<Uint8Array> {
  if (file instanceof Uint8Array) {
    yield file;
    return;
  }
  if (isNodeReadable(file)) {
    // `for await` over a Node Readable destroys it when the loop exits early (abort, error).
    for await (const chunk of file) yield toBytes(chunk);
    return;
  }
  const reader = (file instanceof Blob ? file.stream() : file).getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      yield toBytes(value);
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

function toBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return encoder.encode(chunk);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  invalidOption('file', 'stream yielded something other than bytes or strings.');
}

function isNodeReadable(value: unknown): value is NodeReadableLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { pipe?: unknown }).pipe === 'function' &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

function knownSize(file: UploadFile): number | undefined {
  if (file instanceof Uint8Array) return file.byteLength;
  if (file instanceof Blob) return file.size;
  return undefined;
}

function checkUploadFile(file: unknown): asserts file is UploadFile {
  if (file instanceof Uint8Array || file instanceof Blob) return;
  if (file instanceof ReadableStream) {
    if (file.locked) invalidOption('file', 'stream is already being read (locked): pass an unread stream.');
    return;
  }
  if (isNodeReadable(file)) {
    if (file.readableEnded === true || file.destroyed === true) {
      invalidOption('file', 'stream has already ended or was destroyed: pass a fresh one.');
    }
    return;
  }
  invalidOption('file', 'must be a Blob/File, a Uint8Array, a ReadableStream or a Node Readable.');
}

function escapeQuoted(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/**
 * A streaming reader for the one `file` part of a `multipart/form-data` upload (RFC 7578, RFC 2046 §5.1).
 *
 * Written by hand instead of `Request.formData()` on purpose: `formData()` buffers the whole body, and the
 * fake must take a 256 MB upload while keeping only a bounded prefix of it in memory. Bytes are counted
 * (and handed to an optional observer) as they stream through.
 */
import { apiError, HttpError } from './http.js';

/** What the fake learned about the uploaded file. */
export interface UploadedFile {
  filename: string;
  contentType: string;
  size: number;
  /** The first `keepBytes` bytes. */
  prefix: Uint8Array;
}

const CRLF_CRLF = new Uint8Array([13, 10, 13, 10]);
const MAX_HEADER_BYTES = 16 * 1024;
const decoder = new TextDecoder();

function malformed(message: string): never {
  throw new HttpError(apiError(400, 'invalid_multipart', `Malformed multipart/form-data body: ${message}`));
}

/** The `boundary` parameter of a multipart/form-data content type (RFC 2046 §5.1.1: 1-70 characters). */
export function multipartBoundary(contentType: string | null): string | undefined {
  if (contentType === null || !/^multipart\/form-data\s*;/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

function indexOf(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0] as number;
  for (let i = hay.indexOf(first, from); i !== -1 && i <= hay.length - needle.length; i = hay.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Reads `name`, `filename` (or RFC 5987 `filename*`) and the content type from a part's header block. */
function parsePartHeaders(block: string): { name: string | undefined; filename: string | undefined; type: string } {
  let disposition = '';
  let type = 'application/octet-stream'; // RFC 7578 §4.4 default
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'content-disposition') disposition = value;
    if (key === 'content-type' && value !== '') type = value;
  }
  const param = (p: string) => {
    const m = new RegExp(`;\\s*${p}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${p}=([^;\\s]+)`, 'i').exec(disposition);
    return m === null ? undefined : (m[1]?.replace(/\\(.)/g, '$1') ?? m[2]);
  };
  let filename = param('filename');
  const extended = param('filename\\*');
  if (filename === undefined && extended !== undefined) {
    try {
      filename = decodeURIComponent(extended.replace(/^[\w-]+'[\w-]*'/, ''));
    } catch {
      filename = extended;
    }
  }
  return { name: param('name'), filename, type };
}

/**
 * Streams `body`, returning the `file` part's metadata and prefix. Rejects a missing or repeated `file` part
 * (422) and a body that is not well-formed multipart (400).
 */
export async function readUploadedFile(
  body: ReadableStream<Uint8Array>,
  boundary: string,
  keepBytes: number,
  onChunk?: (chunk: Uint8Array, part: { filename: string; contentType: string }) => void,
): Promise<UploadedFile> {
  // Prepending CRLF makes the first boundary look like every other one: CRLF "--" boundary.
  const delimiter = new TextEncoder().encode(`\r\n--${boundary}`);
  let pending: Uint8Array = new Uint8Array([13, 10]);
  let mode: 'preamble' | 'after-delimiter' | 'headers' | 'body' | 'epilogue' = 'preamble';
  let file: UploadedFile | undefined;
  let current: UploadedFile | undefined; // the file part being read, if the current part is `file`
  const prefixChunks: Uint8Array[] = [];
  let kept = 0;

  const emit = (bytes: Uint8Array) => {
    if (current === undefined || bytes.length === 0) return;
    current.size += bytes.length;
    if (kept < keepBytes) {
      const slice = bytes.slice(0, keepBytes - kept); // a copy: the prefix must not pin the whole chunk
      prefixChunks.push(slice);
      kept += slice.length;
    }
    onChunk?.(bytes, { filename: current.filename, contentType: current.contentType });
  };

  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let buf = concat(pending, value);
      pending = new Uint8Array(0);
      while (buf.length > 0) {
        if (mode === 'epilogue') break;
        if (mode === 'preamble' || mode === 'body') {
          const at = indexOf(buf, delimiter);
          if (at === -1) {
            // Keep just enough of the tail to recognize a delimiter split across two chunks.
            const safe = Math.max(0, buf.length - (delimiter.length - 1));
            if (mode === 'body') emit(buf.subarray(0, safe));
            pending = buf.slice(safe);
            break;
          }
          if (mode === 'body') emit(buf.subarray(0, at));
          current = undefined;
          buf = buf.subarray(at + delimiter.length);
          mode = 'after-delimiter';
        } else if (mode === 'after-delimiter') {
          if (buf.length < 2) {
            pending = buf.slice();
            break;
          }
          if (buf[0] === 45 && buf[1] === 45) mode = 'epilogue'; // "--": the closing delimiter
          else if (buf[0] === 13 && buf[1] === 10) mode = 'headers';
          else malformed('expected CRLF or "--" after a boundary.');
          buf = buf.subarray(2);
        } else {
          const end = indexOf(buf, CRLF_CRLF);
          if (end === -1) {
            if (buf.length > MAX_HEADER_BYTES) malformed('part headers are too long.');
            pending = buf.slice();
            break;
          }
          const headers = parsePartHeaders(decoder.decode(buf.subarray(0, end)));
          if (headers.name === 'file') {
            if (file !== undefined) {
              throw new HttpError(apiError(422, 'validation_error', 'file: send exactly one part named file.', { field: 'file' }));
            }
            file = { filename: headers.filename ?? '', contentType: headers.type, size: 0, prefix: new Uint8Array(0) };
            current = file;
          }
          buf = buf.subarray(end + 4);
          mode = 'body';
        }
      }
    }
  } finally {
    reader.releaseLock();
  }
  if (mode !== 'epilogue') malformed('the body ended before the closing boundary.');
  if (file === undefined) {
    throw new HttpError(apiError(422, 'validation_error', 'file: a part named file is required.', { field: 'file' }));
  }
  const prefix = new Uint8Array(kept);
  let offset = 0;
  for (const chunk of prefixChunks) {
    prefix.set(chunk, offset);
    offset += chunk.length;
  }
  file.prefix = prefix;
  return file;
}

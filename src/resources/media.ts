/** The media library: streamed uploads (scope media:write). */
import { checkOptions, invalidOption, optionalFunction } from '../core/invalid-option.js';
import type { APIPromise } from '../http/api-promise.js';
import { multipartBody, type UploadFile, type UploadProgress } from '../http/multipart.js';
import type { WriteRequestOptions } from '../http/options.js';
import type { Pipeline } from '../http/request.js';
import { routes } from './routes.js';
import { isRecord } from '../core/is-record.js';
import * as z from 'zod/mini';
import { answerParser, checkInput, inputObject, kindOf, type InputShape } from './validate.js';
import { MediaItemSchema } from './wire-contract.js';

/**
 * An uploaded file. The spec shows none of these fields: each is our assumption about the service and may be
 * absent; a value of another type (or `null`) is kept as sent. Fields the SDK does not know are kept too.
 */
export interface MediaItem {
  /** Assumed. `media_…`: attach it to a post with `media_ids`. */
  id?: string | undefined;
  /** Assumed. The file name sent with the upload. */
  filename?: string | undefined;
  /** Assumed. The MIME type sent with the upload. */
  content_type?: string | undefined;
  /** Assumed. Bytes. */
  size?: number | undefined;
  /** Assumed. ISO 8601 UTC. */
  created_at?: string | undefined;
  [field: string]: unknown;
}

/** What `media.upload` takes. */
export interface MediaUploadParams {
  /** A Blob/File, a Uint8Array, a web ReadableStream or a Node Readable (fs.createReadStream). Streamed. */
  file: UploadFile;
  /**
   * The file name sent with the part. Default: a File's name, else the last segment of a file stream's `path`,
   * else `blob` (what `FormData` sends for a Blob without a name).
   */
  filename?: string;
  /** Default: the Blob's type, else `application/octet-stream`. */
  contentType?: string;
}

/**
 * Options of `media.upload`. `extraBody` fields (strings, numbers or booleans) are sent as text parts before the
 * file: `{ extraBody: { alt_text: 'A red bicycle' } }`.
 */
export interface MediaUploadOptions extends WriteRequestOptions {
  /**
   * Called as the file's bytes go out (`total` is known for a Blob or a Uint8Array). A retry of a
   * Blob/Uint8Array upload starts again from 0.
   */
  onProgress?: (progress: UploadProgress) => void;
}

/** The name `FormData` gives a Blob appended without one (WHATWG XHR, "create an entry"). */
const DEFAULT_FILENAME = 'blob';

// `file` is checked where the body is built (multipart.ts), `filename` below: here only which keys may be there.
const uploadShape: InputShape = {
  call: 'media.upload',
  schema: /* @__PURE__ */ inputObject({
    file: /* @__PURE__ */ z.custom<UploadFile>((file) => file !== undefined),
    filename: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.unknown()),
    contentType: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.unknown()),
  }),
  escapeHatch: 'extraBody',
};

// Nothing is given by the spec: any JSON object is a usable answer.
const parseMediaItem = /* @__PURE__ */ answerParser<MediaItem>('a media item', MediaItemSchema);

/**
 * `client.media`: streamed uploads to the media library (scope `media:write`); attach the returned ids to posts
 * as `media_ids`.
 *
 * @example
 * const item = await client.media.upload({ file: await openAsBlob('photo.jpg'), filename: 'photo.jpg', contentType: 'image/jpeg' })
 * if (typeof item.id === 'string') await client.posts.create({ account_ids: ['acc_1'], publish_at, media_ids: [item.id] })
 */
export class Media {
  readonly #pipeline: Pipeline;

  /** Not for you to build (the declarations say so: `new Media()` does not compile): use `client.media`. */
  private constructor(pipeline: Pipeline) {
    this.#pipeline = pipeline;
  }

  /** Built by `PostSched`. @internal */
  static create(pipeline: Pipeline): Media {
    return new Media(pipeline);
  }

  /**
   * Uploads a file as multipart/form-data (part `file`), streaming it: a 2 GB video never sits in memory.
   * A Blob or Uint8Array upload may be retried; a stream is sent once (its bytes are gone).
   *
   * @example
   * import { openAsBlob } from 'node:fs' // streams from disk, and knows the size: `total` is set
   * const item = await client.media.upload(
   *   { file: await openAsBlob('clip.mp4'), filename: 'clip.mp4', contentType: 'video/mp4' },
   *   { onProgress: ({ loaded, total }) => console.log(`${loaded} of ${total} bytes sent`) },
   * )
   */
  upload(params: MediaUploadParams, options: MediaUploadOptions = {}): APIPromise<MediaItem> {
    return this.#pipeline.request(() => {
      const { onProgress, extraBody, ...requestOptions } = checkOptions(options);
      checkInput(params, uploadShape);
      const { file } = params;
      const body = multipartBody({
        field: 'file',
        file,
        filename: filenameOf(params),
        contentType: params.contentType ?? (file instanceof Blob && file.type !== '' ? file.type : 'application/octet-stream'),
        onProgress: optionalFunction(onProgress, 'onProgress'),
        fields: formFields(extraBody),
      });
      return { ...routes.uploadMedia(), body, parse: parseMediaItem, options: requestOptions };
    });
  }
}

/** `extraBody` as text parts: only values a form field can hold. */
function formFields(extra: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (extra === undefined) return undefined;
  if (!isRecord(extra)) invalidOption('extraBody', 'must be an object of form fields.');
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(extra)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      invalidOption(`extraBody.${name}`, `must be a string, number or boolean (a form field of the upload), got ${kindOf(value)}.`, ['extraBody', name]);
    }
    fields[name] = String(value);
  }
  return fields;
}

/** The given filename, a File's name, the last segment of a file stream's `path`, or `blob`. */
function filenameOf({ file, filename }: MediaUploadParams): string {
  if (filename !== undefined) {
    if (typeof filename !== 'string' || filename === '') invalidOption('filename', 'must be a non-empty string.');
    return filename;
  }
  const name = (file as { name?: unknown }).name;
  if (typeof name === 'string' && name !== '') return name;
  const path = (file as { path?: unknown }).path;
  if (typeof path === 'string' && path !== '') return path.split(/[\\/]/).pop() || path;
  return DEFAULT_FILENAME;
}

/** The media library: streamed uploads (scope media:write). */
import * as z from 'zod/mini';
import { invalidOption } from '../invalid-option.js';
import type { APIPromise } from '../http/api-promise.js';
import { multipartBody, type UploadFile, type UploadProgress } from '../http/multipart.js';
import type { Pipeline, WriteRequestOptions } from '../http/request.js';
import { routes } from './routes.js';
import { responseParser } from './validate.js';

/** An uploaded file. Fields the SDK does not know are kept. */
export interface MediaItem {
  /** `media_…` */
  id: string;
  /** The file name sent with the upload. */
  filename: string;
  /** The MIME type sent with the upload. */
  content_type: string;
  /** Bytes. */
  size: number;
  /** ISO 8601 UTC. */
  created_at: string;
  [field: string]: unknown;
}

/** What `media.upload` takes. */
export interface MediaUploadParams {
  /** A Blob/File, a Uint8Array, a web ReadableStream or a Node Readable (fs.createReadStream). Streamed. */
  file: UploadFile;
  /** Required unless `file` is a File or a file stream with a path (its name is used). */
  filename?: string;
  /** Default: the Blob's type, else `application/octet-stream`. */
  contentType?: string;
}

/** Options of `media.upload`. */
export interface MediaUploadOptions extends WriteRequestOptions {
  /**
   * Called as the file's bytes go out (`total` is known for a Blob or a Uint8Array). A retry of a
   * Blob/Uint8Array upload starts again from 0.
   */
  onProgress?: (progress: UploadProgress) => void;
}

// Module-level schemas are built in `/* @__PURE__ */` IIFEs: the build puts the SDK in one chunk, and this lets a
// user's bundler drop them when this resource is not imported (see inspectAs in oauth/inspect.ts).
// The shape answers are checked against (zod/mini): required known fields, unknown fields kept.
const MediaItemSchema = /* @__PURE__ */ (() => z.looseObject({
  id: z.string(),
  filename: z.string(),
  content_type: z.string(),
  size: z.number(),
  created_at: z.string(),
}))();

const parseMediaItem = /* @__PURE__ */ (() => responseParser<MediaItem>(MediaItemSchema, 'a media item'))();

/**
 * `client.media`: streamed uploads to the media library (scope `media:write`); attach the returned ids to posts
 * as `media_ids`.
 *
 * @example
 * const item = await client.media.upload({ file: createReadStream('photo.jpg'), contentType: 'image/jpeg' })
 * await client.posts.create({ account_ids: ['acc_1'], publish_at, media_ids: [item.id] })
 */
export class Media {
  readonly #pipeline: Pipeline;

  /** Built by `PostSched`; use `client.media`. @internal */
  constructor(pipeline: Pipeline) {
    this.#pipeline = pipeline;
  }

  /**
   * Uploads a file as multipart/form-data (part `file`), streaming it: a 2 GB video never sits in memory.
   * A Blob or Uint8Array upload may be retried; a stream is sent once (its bytes are gone).
   *
   * @example
   * import { createReadStream } from 'node:fs'
   * const item = await client.media.upload(
   *   { file: createReadStream('clip.mp4'), contentType: 'video/mp4' },
   *   { onProgress: ({ loaded }) => console.log(`${loaded} bytes sent`) },
   * )
   */
  upload(params: MediaUploadParams, options: MediaUploadOptions = {}): APIPromise<MediaItem> {
    const { onProgress, ...requestOptions } = options;
    return this.#pipeline.request(() => {
      const { file } = params;
      const body = multipartBody({
        field: 'file',
        file,
        filename: filenameOf(params),
        contentType: params.contentType ?? (file instanceof Blob && file.type !== '' ? file.type : 'application/octet-stream'),
        onProgress,
      });
      return { ...routes.uploadMedia(), body, parse: parseMediaItem, options: requestOptions };
    });
  }
}

/** The given filename, a File's name, or the last segment of a file stream's `path`. */
function filenameOf({ file, filename }: MediaUploadParams): string {
  if (filename !== undefined) {
    if (typeof filename !== 'string' || filename === '') invalidOption('filename', 'must be a non-empty string.');
    return filename;
  }
  const name = (file as { name?: unknown }).name;
  if (typeof name === 'string' && name !== '') return name;
  const path = (file as { path?: unknown }).path;
  if (typeof path === 'string' && path !== '') return path.split(/[\\/]/).pop() || path;
  return invalidOption('filename', 'is needed: the service names the media item after it.');
}

/**
 * `POST /media` [media:write]: a multipart/form-data upload with one part named `file` (wire contract).
 * The body is streamed and counted, never buffered (see multipart.ts).
 */
import { requireScope } from './bearer.js';
import { apiError, invalid, json, randomId } from './http.js';
import { claim, idempotencyKey } from './idempotency.js';
import { multipartBoundary, readUploadedFile } from './multipart.js';
import type { RouteHandler } from './router.js';

export const uploadMedia: RouteHandler = async (ctx, request) => {
  const token = requireScope(ctx, request, 'media:write');
  const boundary = multipartBoundary(request.headers.get('content-type'));
  if (boundary === undefined || request.body === null) {
    return apiError(
      415,
      'unsupported_media_type',
      'Send the upload as multipart/form-data (with a boundary) holding one part named file.',
    );
  }
  const key = idempotencyKey(ctx, request, token.grant.clientId);
  // A key still in flight is refused before reading the body; a finished one is checked after (the
  // fingerprint of an upload is known only once it has streamed through).
  if (key !== undefined && ctx.state.idempotency.get(key) === 'in-flight') return await claim(ctx, key, '') as Response;
  const file = await readUploadedFile(request.body, boundary, ctx.media.keepBytes, ctx.media.onChunk);
  if (file.filename === '') invalid('file', 'needs a filename in its Content-Disposition header.');
  if (file.size === 0) invalid('file', 'is empty.');
  const slot =
    key === undefined
      ? undefined
      : await claim(ctx, key, `POST /media\n${file.filename}\n${file.contentType}\n${file.size}`);
  if (slot instanceof Response) return slot;
  const item = {
    id: randomId('media'),
    filename: file.filename,
    content_type: file.contentType,
    size: file.size,
    created_at: new Date(ctx.clock.now()).toISOString(),
  };
  ctx.state.media.set(item.id, { item, prefix: file.prefix });
  const response = json(201, item);
  return slot === undefined ? response : await slot.store(response);
};

import { Readable } from 'node:stream';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostSched, ValidationError, type UploadProgress } from '@postsched/sdk';
import { BASE } from '../helpers.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

interface Received {
  contentType: string | null;
  authorization: string | null;
  idempotencyKey: string | null;
  field: string;
  filename: string;
  partType: string;
  bytes: Uint8Array;
}

/** The service's POST /media: parses the multipart body and answers a MediaItem. `fail` answers first with 503s. */
function mediaService(fail = 0) {
  const received: Received[] = [];
  server.use(
    http.post(`${BASE}/media`, async ({ request }) => {
      const form = await request.formData();
      const entries = [...form.entries()];
      const [field, file] = entries[0] as [string, File];
      received.push({
        contentType: request.headers.get('content-type'),
        authorization: request.headers.get('authorization'),
        idempotencyKey: request.headers.get('idempotency-key'),
        field,
        filename: file.name,
        partType: file.type,
        bytes: new Uint8Array(await file.arrayBuffer()),
      });
      if (received.length <= fail) return HttpResponse.json({ error: { message: 'busy' } }, { status: 503 });
      return HttpResponse.json(
        { id: 'media_1', filename: file.name, content_type: file.type, size: file.size, created_at: '2030-01-01T00:00:00Z', width: 640 },
        { status: 201 },
      );
    }),
  );
  return received;
}

const client = () => new PostSched({ baseUrl: BASE, auth: 'tok_media' });
const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));
const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7) % 251);

describe('media.upload', () => {
  it('posts a File as multipart/form-data, part "file" with its name and type', async () => {
    const received = mediaService();
    const data = bytes(1000);
    const item = await client().media.upload({ file: new File([data], 'photo.png', { type: 'image/png' }) });
    expect(item).toMatchObject({ id: 'media_1', filename: 'photo.png', content_type: 'image/png', size: 1000, width: 640 });
    const [r] = received;
    expect(r!.contentType).toMatch(/^multipart\/form-data; boundary=postsched-[0-9a-f]{32}$/);
    expect(r!.authorization).toBe('Bearer tok_media');
    expect(r!.field).toBe('file');
    expect(r!.filename).toBe('photo.png');
    expect(r!.partType).toBe('image/png');
    expect(r!.bytes).toEqual(data);
  });

  it.each([
    ['a Uint8Array', () => bytes(200_000)],
    ['a web ReadableStream', () => new Blob([bytes(200_000)]).stream()],
    ['a Node Readable', () => Readable.from([Buffer.from(bytes(100_000)), Buffer.from(bytes(100_000).subarray(0))])],
  ])('streams %s intact, with filename and content type given', async (_kind, make) => {
    const received = mediaService();
    const file = make();
    const expectedBytes =
      file instanceof Uint8Array || file instanceof ReadableStream ? bytes(200_000) : new Uint8Array([...bytes(100_000), ...bytes(100_000)]);
    await client().media.upload({ file, filename: 'clip "1".mp4', contentType: 'video/mp4' });
    // Sent as `clip %221%22.mp4` (WHATWG escaping); a form-data parser reads it back.
    expect(received[0]!.filename).toBe('clip "1".mp4');
    expect(received[0]!.partType).toBe('video/mp4');
    expect(sameBytes(received[0]!.bytes, expectedBytes)).toBe(true);
  });

  it('reports progress as bytes go out, with the total for a Blob', async () => {
    mediaService();
    const events: UploadProgress[] = [];
    await client().media.upload(
      { file: new Blob([bytes(300_000)]), filename: 'a.bin' },
      { onProgress: (p) => events.push(p) },
    );
    expect(events.length).toBeGreaterThan(1);
    expect(events.at(-1)).toEqual({ loaded: 300_000, total: 300_000 });
    for (let i = 1; i < events.length; i++) expect(events[i]!.loaded).toBeGreaterThan(events[i - 1]!.loaded);
  });

  it('retries a Blob upload with an idempotency key, sending the same bytes again', async () => {
    const received = mediaService(1);
    await client().media.upload({ file: bytes(5_000), filename: 'a.bin' }, { idempotencyKey: 'up_1' });
    expect(received).toHaveLength(2);
    expect(sameBytes(received[1]!.bytes, received[0]!.bytes)).toBe(true);
    expect(received.map((r) => r.idempotencyKey)).toEqual(['up_1', 'up_1']);
  });

  it('never re-sends a streamed upload (its bytes are gone), even with an idempotency key', async () => {
    const received = mediaService(1);
    const error = await client()
      .media.upload({ file: Readable.from([Buffer.from('abc')]), filename: 'a.txt' }, { idempotencyKey: 'up_2' })
      .catch((e: unknown) => e);
    expect((error as { status?: number }).status).toBe(503);
    expect(received).toHaveLength(1);
  });

  it('uses the path of a file stream as the filename', async () => {
    const received = mediaService();
    const stream = Object.assign(Readable.from([Buffer.from('x')]), { path: '/tmp/videos/holiday.mp4' });
    await client().media.upload({ file: stream });
    expect(received[0]!.filename).toBe('holiday.mp4');
    expect(received[0]!.partType).toBe('application/octet-stream');
  });

  it.each([
    ['bytes', () => bytes(3)],
    ['a Blob', () => new Blob([bytes(3)], { type: 'image/png' })],
    ['a web ReadableStream', () => new Blob([bytes(3)]).stream()],
  ])('sends %s without a name as "blob", the name FormData gives a Blob', async (_kind, make) => {
    const received = mediaService();
    const item = await client().media.upload({ file: make() });
    expect(item.id).toBe('media_1');
    expect(received[0]!.filename).toBe('blob');
    expect(received[0]!.bytes).toEqual(bytes(3));
    const form = new FormData();
    form.append('file', new Blob([bytes(3)]));
    expect((form.get('file') as File).name).toBe('blob');
  });

  it('sends extraBody as text parts before the file, and refuses values a form field cannot hold', async () => {
    let fields: Array<[string, string]> = [];
    server.use(
      http.post(`${BASE}/media`, async ({ request }) => {
        const form = await request.formData();
        fields = [...form.entries()].map(([name, value]) => [name, typeof value === 'string' ? value : `file:${value.name}`]);
        return HttpResponse.json({ id: 'media_2' }, { status: 201 });
      }),
    );
    await client().media.upload({ file: bytes(3), filename: 'a.png' }, { extraBody: { alt_text: 'A red "bike"', folder: 7 } });
    expect(fields).toEqual([
      ['alt_text', 'A red "bike"'],
      ['folder', '7'],
      ['file', 'file:a.png'],
    ]);
    await expect(client().media.upload({ file: bytes(3) }, { extraBody: { tags: ['a'] } })).rejects.toMatchObject({
      path: ['extraBody', 'tags'],
    });
  });

  it('rejects bad input before sending anything', async () => {
    const received = mediaService();
    await expect(client().media.upload({ file: 'not bytes' as never, filename: 'a' })).rejects.toMatchObject({ path: ['file'] });
    await expect(client().media.upload({ file: bytes(1), filename: 'a', contentType: 'text/plain\r\nX-Evil: 1' })).rejects.toBeInstanceOf(
      ValidationError,
    );
    const locked = new Blob([bytes(1)]).stream();
    locked.getReader();
    await expect(client().media.upload({ file: locked, filename: 'a' })).rejects.toMatchObject({ path: ['file'] });
    expect(received).toHaveLength(0);
  });
});

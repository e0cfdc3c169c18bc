import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, type Harness, MODES, start } from './helpers.js';

const BOUNDARY = '----postsched-test-boundary-7MA4YWxkTrZu0gW';
const MB = 1024 * 1024;

/** A deterministic pseudo-random chunk (xorshift), so every run uploads the same bytes. */
function chunkAt(index: number, size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  let x = (index + 1) * 2654435761;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

interface StreamedUpload {
  body: ReadableStream<Uint8Array>;
  /** sha256 of the file content, computed incrementally as the body is produced. */
  digest(): string;
  produced(): number;
}

/** A multipart body produced chunk by chunk on demand (pull), never held whole in memory. */
function streamedUpload(chunks: number, chunkSize: number, onProduce: (fileBytes: number) => void): StreamedUpload {
  const enc = new TextEncoder();
  const hash = createHash('sha256');
  let i = -1;
  let produced = 0;
  let digest = '';
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (i === -1) {
          controller.enqueue(
            enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
          );
        } else if (i < chunks) {
          const chunk = chunkAt(i, chunkSize);
          hash.update(chunk);
          produced += chunk.length;
          onProduce(produced);
          controller.enqueue(chunk);
        } else {
          digest = hash.digest('hex');
          controller.enqueue(enc.encode(`\r\n--${BOUNDARY}--\r\n`));
          controller.close();
        }
        i++;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, digest: () => digest, produced: () => produced };
}

function multipart(parts: string): RequestInit {
  return { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body: parts };
}

describe.each(MODES)('media upload over %s', (mode) => {
  let h: Harness;
  afterEach(() => h.close());

  it('stores a FormData upload with its filename, content type and size', async () => {
    let hash = createHash('sha256');
    h = await start(mode, { media: { onChunk: (chunk) => hash.update(chunk) } });
    const token = h.fake.issueTokens({ scopes: ['media:write'] }).access_token;
    const bytes = chunkAt(7, 100_000);
    const data = new FormData();
    data.set('caption', 'ignored');
    data.set('file', new File([bytes], 'photo.png', { type: 'image/png' }));
    const res = await h.call('/media', bearer(token, { method: 'POST', body: data }));
    expect(res.status).toBe(201);
    const item = await res.json();
    expect(item).toEqual({ id: expect.stringMatching(/^media_/), filename: 'photo.png', content_type: 'image/png', size: 100_000, created_at: new Date(h.fake.clock.now()).toISOString() });
    expect(hash.digest('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(h.fake.getMedia(item.id)?.prefix).toEqual(bytes.slice(0, 64 * 1024));
    hash = createHash('sha256');
  });

  it('streams a 64 MB upload: counts every byte, keeps a bounded prefix, and reads while the client still sends', async () => {
    let received = 0;
    let maxLag = 0;
    const fakeHash = createHash('sha256');
    h = await start(mode, {
      media: {
        keepBytes: 1024,
        onChunk: (chunk) => {
          received += chunk.length;
          fakeHash.update(chunk);
        },
      },
    });
    const token = h.fake.issueTokens({ scopes: ['media:write'] }).access_token;
    // Lag = bytes produced by the client but not yet seen by the fake. A fake that buffered the whole body
    // would see nothing until the end (lag 64 MB); a streaming one stays within socket and queue buffers.
    const upload = streamedUpload(64, MB, (produced) => {
      maxLag = Math.max(maxLag, produced - received);
    });
    const headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
    const res = await h.call('/media', bearer(token, { method: 'POST', headers, body: upload.body, duplex: 'half' } as RequestInit));
    expect(res.status).toBe(201);
    const item = await res.json();
    expect(item).toMatchObject({ filename: 'big.bin', content_type: 'application/octet-stream', size: 64 * MB });
    expect(fakeHash.digest('hex')).toBe(upload.digest());
    expect(h.fake.getMedia(item.id)?.prefix.length).toBe(1024);
    expect(maxLag).toBeLessThan(24 * MB);
  });

  it.each([
    ['no file part', `--${BOUNDARY}\r\nContent-Disposition: form-data; name="caption"\r\n\r\nhello\r\n--${BOUNDARY}--\r\n`, 422, 'file'],
    ['two file parts', `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\na\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="b"\r\n\r\nb\r\n--${BOUNDARY}--\r\n`, 422, 'file'],
    ['an empty file', `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n\r\n--${BOUNDARY}--\r\n`, 422, 'file'],
    ['a file without filename', `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc\r\n--${BOUNDARY}--\r\n`, 422, 'file'],
    ['a body cut before the closing boundary', `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc`, 400, undefined],
  ])('refuses %s', async (_name, body, status, field) => {
    h = await start(mode);
    const token = h.fake.issueTokens().access_token;
    const res = await h.call('/media', bearer(token, multipart(body)));
    expect(res.status).toBe(status);
    const json = await res.json();
    if (field === undefined) expect(json).toMatchObject({ error: { code: 'invalid_multipart' } });
    else expect(json).toMatchObject({ error: { code: 'validation_error', field } });
  });

  it('keeps the part content type default and a quoted filename with escapes', async () => {
    h = await start(mode);
    const token = h.fake.issueTokens().access_token;
    const body = `preamble\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="my \\"best\\" pic.jpg"\r\n\r\n--not-a-boundary\r\n--${BOUNDARY}--\r\nepilogue`;
    const res = await h.call('/media', bearer(token, multipart(body)));
    expect(await res.json()).toMatchObject({ filename: 'my "best" pic.jpg', content_type: 'application/octet-stream', size: 16 });
  });

  it('answers 415 for a non-multipart upload and replays an upload with the same Idempotency-Key', async () => {
    h = await start(mode);
    const token = h.fake.issueTokens().access_token;
    const json = await h.call('/media', bearer(token, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
    expect(json.status).toBe(415);
    const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nabc\r\n--${BOUNDARY}--\r\n`;
    const withKey = (init: RequestInit) => ({ ...init, headers: { ...(init.headers as Record<string, string>), 'idempotency-key': 'upload-1' } });
    const first = await (await h.call('/media', bearer(token, withKey(multipart(body))))).json();
    const replay = await h.call('/media', bearer(token, withKey(multipart(body))));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toEqual(first);
  });

  it('answers 401 to an upload with an expired token without reading it', async () => {
    h = await start(mode);
    const token = h.fake.issueTokens().access_token;
    await h.fake.clock.advance(3_600_000);
    const upload = streamedUpload(4, MB, () => undefined);
    const headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
    const res = await h.call('/media', bearer(token, { method: 'POST', headers, body: upload.body, duplex: 'half' } as RequestInit));
    expect(res.status).toBe(401);
  });
});

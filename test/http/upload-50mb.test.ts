import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostSched, type UploadProgress } from '@postsched/sdk';

const SIZE = 50 * 1024 * 1024;
const CHUNK = 256 * 1024;

/**
 * Hashes the file part of a multipart body while it streams in, holding back only the closing boundary:
 * skips the part headers (up to the first blank line) and drops the `\r\n--boundary--\r\n` tail.
 */
async function hashFilePart(request: IncomingMessage): Promise<{ sha256: string; bytes: number; filename: string }> {
  const boundary = /boundary=([^;]+)/.exec(request.headers['content-type'] ?? '')![1]!;
  const tailLength = Buffer.byteLength(`\r\n--${boundary}--\r\n`);
  const hash = createHash('sha256');
  let head = Buffer.alloc(0);
  let inBody = false;
  let held = Buffer.alloc(0);
  let bytes = 0;
  let filename = '';
  for await (const chunk of request as AsyncIterable<Buffer>) {
    let data = chunk;
    if (!inBody) {
      head = Buffer.concat([head, data]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) continue;
      filename = /filename="([^"]*)"/.exec(head.subarray(0, end).toString())?.[1] ?? '';
      data = head.subarray(end + 4);
      inBody = true;
    }
    held = Buffer.concat([held, data]);
    if (held.length > tailLength) {
      const out = held.subarray(0, held.length - tailLength);
      hash.update(out);
      bytes += out.length;
      held = Buffer.from(held.subarray(held.length - tailLength));
    }
  }
  if (held.toString() !== `\r\n--${boundary}--\r\n`) throw new Error('the multipart body did not end with its closing boundary');
  return { sha256: hash.digest('hex'), bytes, filename };
}

let server: Server;
let baseUrl: string;
const uploads: Array<{ sha256: string; bytes: number; filename: string; transferEncoding: string | undefined }> = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    hashFilePart(request).then((result) => {
      uploads.push({ ...result, transferEncoding: request.headers['transfer-encoding'] });
      response.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'req_up' });
      response.end(JSON.stringify({ id: 'media_big', filename: result.filename, content_type: 'video/mp4', size: result.bytes, created_at: '2030-01-01T00:00:00Z' }));
    }, () => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** 50 MiB of deterministic pseudo-random bytes, generated chunk by chunk (never held whole), hashed as they go. */
function generatedFile() {
  const hash = createHash('sha256');
  let state = 0x9e3779b9;
  async function* chunks() {
    for (let sent = 0; sent < SIZE; sent += CHUNK) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, SIZE - sent));
      for (let i = 0; i < chunk.length; i += 4) {
        state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
        chunk.writeUInt32LE(state, i);
      }
      hash.update(chunk);
      yield chunk;
    }
  }
  return { stream: Readable.from(chunks()), digest: () => hash.digest('hex') };
}

describe('large uploads', () => {
  it('streams a 50 MiB file from a Node Readable: bytes arrive intact and progress adds up to the size', async () => {
    const client = new PostSched({ baseUrl, auth: 'tok_upload' });
    const file = generatedFile();
    const events: UploadProgress[] = [];
    const item = await client.media.upload(
      { file: file.stream, filename: 'big.mp4', contentType: 'video/mp4' },
      { onProgress: (progress) => events.push(progress) },
    );
    expect(item).toMatchObject({ id: 'media_big', size: SIZE, filename: 'big.mp4' });
    expect(uploads).toHaveLength(1);
    expect(uploads[0]!.bytes).toBe(SIZE);
    expect(uploads[0]!.sha256).toBe(file.digest());
    expect(uploads[0]!.transferEncoding).toBe('chunked');
    for (let i = 1; i < events.length; i++) expect(events[i]!.loaded).toBeGreaterThan(events[i - 1]!.loaded);
    expect(events.at(-1)).toEqual({ loaded: SIZE });
    expect(events.every((e) => e.total === undefined)).toBe(true);
  });

  it('stops reading the file and rejects when the caller aborts mid-upload', async () => {
    const client = new PostSched({ baseUrl, auth: 'tok_upload' });
    const file = generatedFile();
    const controller = new AbortController();
    let last = 0;
    const error = await client.media
      .upload(
        { file: file.stream, filename: 'big.mp4' },
        {
          signal: controller.signal,
          onProgress: ({ loaded }) => {
            last = loaded;
            if (loaded >= 5 * 1024 * 1024) controller.abort();
          },
        },
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'AbortError' });
    const sentAtAbort = last;
    for (let i = 0; i < 100 && !file.stream.destroyed; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(file.stream.destroyed).toBe(true);
    // At most the chunk in flight went out after the abort; the rest of the file was never read.
    expect(last - sentAtAbort).toBeLessThanOrEqual(64 * 1024);
  });
});

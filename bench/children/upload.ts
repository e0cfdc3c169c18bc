/**
 * Child process of the upload-memory measure: uploads one file from disk and reports RSS before the upload
 * and the peak during it, as JSON on stdout. Run as `node --import tsx upload.ts <mode> <baseUrl> <token> <path>`;
 * `mode` is `ours` (media.upload of fs.createReadStream), `floor` (bare fetch of the same multipart bytes,
 * fetch's default `redirect: 'follow'`) or `floor-no-redirect` (the same with `redirect: 'error'`).
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { PostSched } from '@postsched/sdk';

const [mode, baseUrl, token, path] = process.argv.slice(2) as [string, string, string, string];

let peak = 0;
const sample = () => {
  peak = Math.max(peak, process.memoryUsage.rss());
};

/** Bare fetch of a streamed multipart body, the file part read with fs.createReadStream. */
async function floorUpload(redirect: RequestRedirect): Promise<unknown> {
  const boundary = 'bench-floor-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  async function* parts() {
    yield Buffer.from(head);
    for await (const chunk of createReadStream(path)) yield chunk as Buffer;
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  const response = await fetch(`${baseUrl}/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: Readable.toWeb(Readable.from(parts())) as ReadableStream<Uint8Array>,
    duplex: 'half',
    redirect,
  } as RequestInit);
  return response.json();
}

async function oursUpload(): Promise<unknown> {
  const client = new PostSched({ baseUrl, auth: token });
  return client.media.upload({ file: createReadStream(path), filename: 'big.bin' });
}

const upload =
  mode === 'floor' ? () => floorUpload('follow') : mode === 'floor-no-redirect' ? () => floorUpload('error') : oursUpload;
const before = process.memoryUsage.rss();
const maxRssBefore = process.resourceUsage().maxRSS * 1024;
const timer = setInterval(sample, 5);
const result = (await upload()) as { size?: number };
clearInterval(timer);
sample();
// maxRSS (the kernel's high-water mark) catches a peak between two samples, once it rises above start-up's.
const maxRssAfter = process.resourceUsage().maxRSS * 1024;
if (maxRssAfter > maxRssBefore) peak = Math.max(peak, maxRssAfter);
process.stdout.write(`${JSON.stringify({ before, peak, size: result.size })}\n`);

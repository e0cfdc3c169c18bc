import { describe, expect, it } from 'vitest';
import { NOW, SECRET, T, backends, header, publishedBody, thrown } from './backends.js';

const post = (body: BodyInit, headers: HeadersInit = { 'X-Service-Signature': header(SECRET, T, publishedBody) }) =>
  new Request('https://app.example/webhooks', { method: 'POST', body, headers });

describe.each(backends)('verifyWebhookRequest ($name)', ({ api }) => {
  const { verifyWebhookRequest } = api;

  it('verifies a Fetch Request and returns the event', async () => {
    const event = await verifyWebhookRequest(post(publishedBody), SECRET, { now: NOW });
    expect(event.event).toBe('post.published');
  });

  it('verifies the exact bytes of a streamed non-ASCII body', async () => {
    const body = JSON.stringify({ event: 'post.failed', created_at: 'c', data: { id: '🚀', account_ids: ['中'] } });
    const stream = new Blob([body]).stream();
    const request = new Request('https://app.example/webhooks', {
      method: 'POST',
      body: stream,
      headers: { 'x-service-signature': header(SECRET, T, body) },
      duplex: 'half',
    } as RequestInit);
    await expect(verifyWebhookRequest(request, SECRET, { now: NOW })).resolves.toMatchObject({ data: { id: '🚀' } });
  });

  it('accepts several secrets and passes the clock options on', async () => {
    await expect(verifyWebhookRequest(post(publishedBody), ['whsec_new', SECRET], { now: NOW })).resolves.toBeTruthy();
    expect((await thrown(() => verifyWebhookRequest(post(publishedBody), SECRET, { now: NOW + 301_000 }))).reason)
      .toBe('timestamp_too_old');
  });

  it('rejects a tampered body and a missing header', async () => {
    expect((await thrown(() => verifyWebhookRequest(post(`${publishedBody} `), SECRET, { now: NOW }))).reason)
      .toBe('no_matching_signature');
    expect((await thrown(() => verifyWebhookRequest(post(publishedBody, {}), SECRET, { now: NOW }))).reason)
      .toBe('missing_signature');
  });

  it('says so when the body was already read', async () => {
    const request = post(publishedBody);
    await request.text();
    const error = await thrown(() => verifyWebhookRequest(request, SECRET, { now: NOW }));
    expect(error.reason).toBe('body_not_raw');
    expect(error.message).toMatch(/already read/);
  });

  it('says so when given something that is not a Fetch Request (an Express req)', async () => {
    const expressLike = { headers: { 'x-service-signature': 't=1,v1=00' }, body: {} };
    expect((await thrown(() => verifyWebhookRequest(expressLike as never, SECRET))).reason).toBe('body_not_raw');
  });

  it('reports a bad secret before reading the body', async () => {
    const request = post(publishedBody);
    expect((await thrown(() => verifyWebhookRequest(request, '')))).toMatchObject({ reason: 'invalid_secret' });
    expect(request.bodyUsed).toBe(false);
  });
});

/** A body that is produced only as it is read: `pulled` counts the bytes handed out (issue 12, item 6). */
function lazyBody(totalBytes: number, chunkBytes = 64 * 1024) {
  const counter = { pulled: 0, cancelled: false };
  const chunk = new Uint8Array(chunkBytes).fill(0x20);
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (counter.pulled >= totalBytes) return controller.close();
        const next = chunk.subarray(0, Math.min(chunkBytes, totalBytes - counter.pulled));
        counter.pulled += next.byteLength;
        controller.enqueue(next);
      },
      cancel() {
        counter.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, counter };
}

const streamed = (stream: ReadableStream<Uint8Array>, headers: Record<string, string>) =>
  new Request('https://app.example/webhooks', { method: 'POST', body: stream, headers, duplex: 'half' } as RequestInit);

describe.each(backends)('verifyWebhookRequest reads the header first and caps the body ($name)', ({ api }) => {
  const { verifyWebhookRequest, DEFAULT_WEBHOOK_MAX_BODY_BYTES } = api;
  const signed = { 'x-service-signature': header(SECRET, T, publishedBody) };

  it.each([
    ['missing_signature', {}, NOW],
    ['malformed_signature', { 'x-service-signature': 't=abc,v1=00' }, NOW],
    ['timestamp_too_old', signed, NOW + 3_600_000],
    ['timestamp_in_future', signed, NOW - 3_600_000],
  ])('rejects %s without reading a byte of a 512 MiB body', async (reason, headers, now) => {
    const { stream, counter } = lazyBody(512 * 1024 * 1024);
    const error = await thrown(() => verifyWebhookRequest(streamed(stream, headers), SECRET, { now }));
    expect(error.reason).toBe(reason);
    expect(counter.pulled).toBe(0);
    expect(counter.cancelled).toBe(true); // the body is dropped, not left for the runtime to buffer
  });

  it('stops reading a 64 MiB body at maxBodyBytes (1 MiB by default) and says body_too_large', async () => {
    const { stream, counter } = lazyBody(64 * 1024 * 1024);
    const error = await thrown(() => verifyWebhookRequest(streamed(stream, signed), SECRET, { now: NOW }));
    expect(error.reason).toBe('body_too_large');
    expect(error.message).toContain(String(DEFAULT_WEBHOOK_MAX_BODY_BYTES));
    expect(counter.pulled).toBeLessThanOrEqual(DEFAULT_WEBHOOK_MAX_BODY_BYTES + 64 * 1024);
    expect(counter.cancelled).toBe(true);
  });

  it('stops reading an endless body', async () => {
    const { stream, counter } = lazyBody(Number.POSITIVE_INFINITY);
    const error = await thrown(() => verifyWebhookRequest(streamed(stream, signed), SECRET, { now: NOW, maxBodyBytes: 1000 }));
    expect(error.reason).toBe('body_too_large');
    expect(counter.pulled).toBeLessThanOrEqual(1000 + 64 * 1024);
  });

  it('refuses a Content-Length over the cap before reading', async () => {
    const { stream, counter } = lazyBody(4096);
    const request = streamed(stream, { ...signed, 'content-length': '4096' });
    const error = await thrown(() => verifyWebhookRequest(request, SECRET, { now: NOW, maxBodyBytes: 4095 }));
    expect(error.reason).toBe('body_too_large');
    expect(counter.pulled).toBe(0);
  });

  it('verifies a body of exactly maxBodyBytes and refuses one byte more', async () => {
    const exact = publishedBody.padEnd(2048, ' '); // JSON may end in whitespace
    const request = (body: string) =>
      new Request('https://app.example/webhooks', { method: 'POST', body, headers: { 'x-service-signature': header(SECRET, T, body) } });
    await expect(verifyWebhookRequest(request(exact), SECRET, { now: NOW, maxBodyBytes: 2048 })).resolves.toMatchObject({
      event: 'post.published',
    });
    expect((await thrown(() => verifyWebhookRequest(request(`${exact} `), SECRET, { now: NOW, maxBodyBytes: 2048 }))).reason)
      .toBe('body_too_large');
  });

  it('refuses a maxBodyBytes that is not a whole number ≥ 0', async () => {
    for (const maxBodyBytes of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(verifyWebhookRequest(post(publishedBody), SECRET, { now: NOW, maxBodyBytes })).rejects.toThrow(/maxBodyBytes/);
    }
  });
});

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

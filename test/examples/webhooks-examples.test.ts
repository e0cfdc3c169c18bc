import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as expressExample from '../../examples/webhooks-express.js';
import * as fetchExample from '../../examples/webhooks-fetch.js';

const SECRET = 'whsec_example_9d2e';
const body = JSON.stringify({
  event: 'post.published',
  created_at: '2024-05-01T12:00:00Z',
  data: { id: 'post_42', account_ids: ['acc_1'], published_at: '2024-05-01T12:00:00Z' },
});

/** Signs as the service does (spec §5): HMAC-SHA256 over "<t>.<body>", lowercase hex, t = now. */
function sign(payload: string, secret = SECRET): string {
  const t = Math.floor(Date.now() / 1000);
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex')}`;
}

const savedSecret = process.env.POSTSCHED_WEBHOOK_SECRET;
beforeEach(() => {
  process.env.POSTSCHED_WEBHOOK_SECRET = SECRET;
  expressExample.jobs.length = 0;
  fetchExample.jobs.length = 0;
  vi.spyOn(console, 'warn').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
  if (savedSecret === undefined) delete process.env.POSTSCHED_WEBHOOK_SECRET;
  else process.env.POSTSCHED_WEBHOOK_SECRET = savedSecret;
});

describe('examples/webhooks-express.ts', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    server = expressExample.createApp().listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/postsched`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const deliver = (payload: string, headers: Record<string, string>) =>
    fetch(url, { method: 'POST', body: payload, headers: { 'content-type': 'application/json', ...headers } });

  it('answers 204 to a correctly signed delivery and enqueues the event', async () => {
    const response = await deliver(body, { 'X-Service-Signature': sign(body) });
    expect(response.status).toBe(204);
    expect(expressExample.jobs).toEqual([JSON.parse(body)]);
  });

  it('answers 400 to a tampered body and enqueues nothing', async () => {
    const response = await deliver(body.replace('post_42', 'post_43'), { 'X-Service-Signature': sign(body) });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('no_matching_signature');
    expect(expressExample.jobs).toEqual([]);
  });

  it('answers 400 to a delivery without a signature', async () => {
    const response = await deliver(body, {});
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('missing_signature');
  });

  it('answers 500, not 400, when the server has no secret configured', async () => {
    delete process.env.POSTSCHED_WEBHOOK_SECRET;
    const response = await deliver(body, { 'X-Service-Signature': sign(body) });
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain(SECRET);
  });
});

describe('examples/webhooks-fetch.ts', () => {
  const request = (payload: string, headers: Record<string, string>) =>
    new Request('https://app.example/api/webhooks/postsched', { method: 'POST', body: payload, headers });

  it('answers 204 to a correctly signed delivery and enqueues the event', async () => {
    const response = await fetchExample.POST(request(body, { 'x-service-signature': sign(body) }));
    expect(response.status).toBe(204);
    expect(fetchExample.jobs).toEqual([JSON.parse(body)]);
  });

  it('answers 400 to a delivery signed with another secret', async () => {
    const response = await fetchExample.POST(request(body, { 'x-service-signature': sign(body, 'whsec_other') }));
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('no_matching_signature');
    expect(fetchExample.jobs).toEqual([]);
  });

  it('answers 400 to a re-serialized body', async () => {
    const pretty = JSON.stringify(JSON.parse(body), null, 2);
    const response = await fetchExample.POST(request(pretty, { 'x-service-signature': sign(body) }));
    expect(response.status).toBe(400);
  });

  it('throws (a 500 in every framework) when the secret is not configured', async () => {
    process.env.POSTSCHED_WEBHOOK_SECRET = ' ';
    await expect(fetchExample.POST(request(body, { 'x-service-signature': sign(body) }))).rejects.toMatchObject({
      reason: 'invalid_secret',
    });
  });
});

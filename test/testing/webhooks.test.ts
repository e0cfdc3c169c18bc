import { afterEach, describe, expect, it } from 'vitest';
import type { FakeServiceOptions } from '@postsched/sdk/testing';
import { verifyWebhook } from '@postsched/sdk/webhooks';
import { type Harness, inFuture, jsonBody, MODES, start, verifySignature } from './helpers.js';
import { type Receiver, startReceiver } from './receiver.js';

const SECRET = 'whsec_test_secret';

describe.each(MODES)('lifecycle and webhooks over %s', (mode) => {
  let h: Harness;
  let receiver: Receiver;
  let token: string;
  afterEach(async () => {
    await h.close();
    await receiver.close();
  });

  async function setup(events?: FakeServiceOptions['webhookEndpoints'], webhooks: FakeServiceOptions['webhooks'] = {}) {
    receiver = await startReceiver(mode);
    h = await start(mode, {
      webhookEndpoints: events ?? [{ url: receiver.url, secret: SECRET }],
      webhooks: { ...(receiver.fetch === undefined ? {} : { fetch: receiver.fetch }), ...webhooks },
    });
    token = h.fake.issueTokens().access_token;
  }

  const schedule = async (accountIds = ['acc_demo_x'], inMs = 5_000) =>
    (await h.call('/posts', jsonBody('POST', { account_ids: accountIds, publish_at: inFuture(h.fake, inMs) }, token))).json();

  it('delivers post.scheduled then post.published at publish_at, signed as the spec says', async () => {
    await setup();
    const post = await schedule();
    await h.fake.flushWebhooks();
    expect(receiver.received.map((r) => JSON.parse(r.body).event)).toEqual(['post.scheduled']);
    await h.fake.clock.advance(4_999);
    expect(receiver.received).toHaveLength(1);
    const before = Math.floor(Date.now() / 1000);
    await h.fake.clock.advance(1);
    const after = Math.floor(Date.now() / 1000);
    expect(receiver.received).toHaveLength(2);
    const delivery = receiver.received[1]!;
    const body = JSON.parse(delivery.body);
    expect(body).toEqual({
      event: 'post.published',
      created_at: new Date(h.fake.clock.now()).toISOString(),
      data: expect.objectContaining({ id: post.id, account_ids: ['acc_demo_x'], published_at: new Date(h.fake.clock.now()).toISOString(), status: 'published' }),
    });
    expect(delivery.headers['content-type']).toBe('application/json');
    // Signed when sent, on the wall clock (the receiver's clock), not the fake's.
    const signature = verifySignature(delivery.headers['x-service-signature']!, delivery.body, SECRET);
    expect(signature.ok).toBe(true);
    expect(signature.t).toBeGreaterThanOrEqual(before);
    expect(signature.t).toBeLessThanOrEqual(after);
    expect(verifySignature(delivery.headers['x-service-signature']!, delivery.body, 'whsec_other').ok).toBe(false);
    expect(h.fake.deliveries.map((d) => [d.event, d.status, d.attempt])).toEqual([
      ['post.scheduled', 200, 1],
      ['post.published', 200, 1],
    ]);
    expect(h.fake.deliveries[1]!.body).toBe(delivery.body);
  });

  it('fails the post for an account configured to fail, and fires post.failed', async () => {
    await setup();
    h.fake.failPublicationFor('acc_demo_linkedin');
    const post = await schedule(['acc_demo_x', 'acc_demo_linkedin']);
    await h.fake.clock.advance(5_000);
    expect(h.fake.getPost(post.id)?.status).toBe('failed');
    const last = JSON.parse(receiver.received.at(-1)!.body);
    expect(last).toMatchObject({ event: 'post.failed', data: { id: post.id, account_ids: ['acc_demo_x', 'acc_demo_linkedin'] } });
    expect(last.data.published_at).toBeUndefined();
    expect((await h.call(`/posts/${post.id}`, { ...jsonBody('DELETE', {}, token) })).status).toBe(409);
  });

  it('fires post.deleted when a scheduled post is deleted, and never publishes it', async () => {
    await setup();
    const post = await schedule();
    await h.call(`/posts/${post.id}`, jsonBody('DELETE', {}, token));
    await h.fake.clock.advance(60_000);
    expect(receiver.received.map((r) => JSON.parse(r.body).event)).toEqual(['post.scheduled', 'post.deleted']);
  });

  it('sends each event only to the endpoints subscribed to it', async () => {
    receiver = await startReceiver(mode);
    const other = await startReceiver(mode, 'other');
    const fetches = receiver.fetch && other.fetch ? { fetch: (url: string, init: RequestInit) => (url === receiver.url ? receiver.fetch! : other.fetch!)(url, init) } : {};
    h = await start(mode, {
      webhookEndpoints: [
        { url: receiver.url, secret: SECRET, events: ['post.published'] },
        { url: other.url, secret: 'whsec_two', events: ['post.scheduled', 'post.deleted'] },
      ],
      webhooks: fetches,
    });
    token = h.fake.issueTokens().access_token;
    await schedule();
    await h.fake.clock.advance(5_000);
    expect(receiver.received.map((r) => JSON.parse(r.body).event)).toEqual(['post.published']);
    expect(other.received.map((r) => JSON.parse(r.body).event)).toEqual(['post.scheduled']);
    expect(verifySignature(other.received[0]!.headers['x-service-signature']!, other.received[0]!.body, 'whsec_two').ok).toBe(true);
    await other.close();
  });

  it('retries a failing receiver with exponential backoff on the fake clock, recording every attempt', async () => {
    await setup(undefined, { backoffMs: 1_000, maxAttempts: 4 });
    receiver.script.push(500, 503, 502);
    await h.call('/posts', jsonBody('POST', { account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake, 3_600_000) }, token));
    await h.fake.flushWebhooks();
    expect(h.fake.deliveries.map((d) => d.status)).toEqual([500]);
    await h.fake.clock.advance(999);
    expect(h.fake.deliveries).toHaveLength(1);
    await h.fake.clock.advance(1);
    expect(h.fake.deliveries.map((d) => d.status)).toEqual([500, 503]);
    await h.fake.clock.advance(2_000);
    expect(h.fake.deliveries.map((d) => d.status)).toEqual([500, 503, 502]);
    const before = Math.floor(Date.now() / 1000);
    await h.fake.clock.advance(4_000);
    const after = Math.floor(Date.now() / 1000);
    const attempts = h.fake.deliveries.map((d) => [d.attempt, d.status, d.sentAt]);
    const t0 = Date.parse(h.fake.deliveries[0]!.sentAt);
    expect(attempts).toEqual([
      [1, 500, new Date(t0).toISOString()],
      [2, 503, new Date(t0 + 1_000).toISOString()],
      [3, 502, new Date(t0 + 3_000).toISOString()],
      [4, 200, new Date(t0 + 7_000).toISOString()],
    ]);
    // Each attempt is signed anew, when it is sent (wall clock), over the same body.
    const last = receiver.received.at(-1)!;
    const signature = verifySignature(last.headers['x-service-signature']!, last.body, SECRET);
    expect(signature.ok).toBe(true);
    expect(signature.t).toBeGreaterThanOrEqual(before);
    expect(signature.t).toBeLessThanOrEqual(after);
    expect(new Set(h.fake.deliveries.map((d) => d.eventId)).size).toBe(1);
  });

  it('deliveries made after the fake clock moved hours ahead verify with verifyWebhook and its default options', async () => {
    await setup();
    const post = await schedule(['acc_demo_x'], 2 * 3_600_000);
    await h.fake.clock.advance(2 * 3_600_000); // what a test of "publishes in two hours" does
    expect(receiver.received.map((r) => JSON.parse(r.body).event)).toEqual(['post.scheduled', 'post.published']);
    for (const { body, headers } of receiver.received) {
      const event = await verifyWebhook({ body, signature: headers, secret: SECRET }); // no `now`, no tolerance
      expect(event.data.id).toBe(post.id);
    }
    // The event itself tells the fake's time: the publication happened two hours "later".
    expect(Date.parse(JSON.parse(receiver.received[1]!.body).created_at)).toBe(h.fake.clock.now());
  });

  it('stops after maxAttempts', async () => {
    await setup(undefined, { backoffMs: 10, maxAttempts: 3 });
    receiver.script.push(500, 500, 500, 500);
    await schedule(['acc_demo_x'], 3_600_000);
    await h.fake.clock.advance(60_000);
    expect(h.fake.deliveries.map((d) => d.status)).toEqual([500, 500, 500]);
  });

  it('times out a receiver that does not answer and retries it', async () => {
    // 500 ms: the hanging attempt waits it out; the answering one must not time out on a loaded machine.
    await setup(undefined, { backoffMs: 1_000, timeoutMs: 500 });
    receiver.script.push('hang');
    await schedule(['acc_demo_x'], 3_600_000);
    await h.fake.flushWebhooks();
    expect(h.fake.deliveries.map((d) => [d.attempt, d.status, d.error])).toEqual([[1, null, 'timeout']]);
    await h.fake.clock.advance(1_000);
    expect(h.fake.deliveries.map((d) => [d.attempt, d.status])).toEqual([[1, null], [2, 200]]);
  });
});

describe('webhook delivery to an unreachable receiver', () => {
  it('records a network error and retries', async () => {
    let calls = 0;
    const h = await start('handler', {
      webhookEndpoints: [{ url: 'http://127.0.0.1:9/hooks', secret: SECRET }],
      webhooks: { backoffMs: 100, maxAttempts: 2, fetch: async () => { calls++; throw new TypeError('fetch failed'); } },
    });
    const token = h.fake.issueTokens().access_token;
    await h.call('/posts', jsonBody('POST', { account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake) }, token));
    await h.fake.clock.advance(100);
    expect(h.fake.deliveries.map((d) => [d.attempt, d.status, d.error])).toEqual([[1, null, 'network'], [2, null, 'network']]);
    expect(calls).toBe(2);
    await h.close();
  });
});

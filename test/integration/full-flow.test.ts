import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTokenStore, PostSched, TokenManager, type TokenSet } from '@postsched/sdk';
import { verifyWebhook } from '@postsched/sdk/webhooks';
import { FAKE_PROFILE, FULL } from '../support/fake-profile.js';
import { login, startFake, startReceiver, type Receiver, type Started } from './harness.js';

const SECRET = 'whsec_integration_full_flow';
let started: Started | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  await started?.fake.close();
  await receiver?.close();
  started = undefined;
  receiver = undefined;
});

describe('the whole flow, SDK against the fake over HTTP on 127.0.0.1', () => {
  it('authorizes, schedules a post with media, publishes it, delivers signed webhooks, reads analytics and refreshes an expired token', async () => {
    // The receiver checks signatures on the wall clock, as an app does: the fake signs when it sends.
    receiver = await startReceiver(SECRET, () => Date.now());
    started = await startFake({ webhookEndpoints: [{ url: receiver.url, secret: SECRET }] });
    const { fake, baseUrl, oauth } = started;

    // 1. OAuth: authorize (consent is automatic in the fake), exchange the code.
    const tokens = await login(oauth);
    expect(tokens.scopes).toEqual(['accounts:read', 'posts:read', 'posts:write', 'media:write', 'analytics:read']);
    const saved: TokenSet[] = [];
    const manager = new TokenManager({ oauth, store: new MemoryTokenStore(), onTokens: (t) => void saved.push(t) });
    await manager.setTokens(tokens);
    const client = new PostSched({ baseUrl, auth: manager });

    // 2. Accounts.
    const accounts = await client.accounts.list().toArray();
    expect(accounts.map((a) => a.id)).toEqual(['acc_demo_x', 'acc_demo_linkedin']);

    // 3. Upload, with progress.
    const image = new Blob([new Uint8Array(200_000).fill(1)], { type: 'image/png' });
    const progress: number[] = [];
    const media = await client.media.upload({ file: image, filename: 'launch.png' }, { onProgress: ({ loaded }) => progress.push(loaded) });
    expect(progress.at(-1)).toBe(200_000);
    // Every media field is assumed: only `full` answers them all; `minimal` keeps the id a flow needs.
    if (FULL) expect(media).toMatchObject({ filename: 'launch.png', content_type: 'image/png', size: 200_000 });
    if (FAKE_PROFILE === 'minimal') expect(Object.keys(media)).toEqual(['id']);
    const mediaId = typeof media.id === 'string' ? media.id : undefined;
    if (FAKE_PROFILE !== 'noisy') expect(mediaId).toBeDefined();
    if (mediaId !== undefined) expect(fake.getMedia(mediaId)?.item).toMatchObject({ filename: 'launch.png', content_type: 'image/png', size: 200_000 });

    // 4. Schedule a post a minute ahead on the fake's clock.
    const post = await client.posts.create(
      { account_ids: ['acc_demo_x'], publish_at: new Date(fake.clock.now() + 60_000), text: 'Launch!', ...(mediaId === undefined ? {} : { media_ids: [mediaId] }) },
      { idempotencyKey: 'launch-post-1' },
    );
    expect(post.account_ids).toEqual(['acc_demo_x']);
    expect(fake.getPost(post.id)).toMatchObject({ status: 'scheduled', text: 'Launch!' });
    if (FULL) expect(post.status).toBe('scheduled');
    if (FAKE_PROFILE === 'minimal') expect(post).toEqual({ id: post.id, account_ids: ['acc_demo_x'] });
    await fake.flushWebhooks();
    expect(receiver.events.map((e) => e.event)).toEqual(['post.scheduled']);

    // 5. Publication on the fake clock, then the signed post.published webhook.
    await fake.clock.advance(61_000);
    await fake.flushWebhooks();
    expect(receiver.refused).toEqual([]);
    expect(receiver.events.map((e) => e.event)).toEqual(['post.scheduled', 'post.published']);
    const published = receiver.events[1];
    expect(published).toMatchObject({ event: 'post.published', data: { id: post.id, account_ids: ['acc_demo_x'] } });
    const fetched = await client.posts.get(post.id);
    expect(fetched.id).toBe(post.id);
    expect(published?.event === 'post.published' && published.data.published_at).toBe(fake.getPost(post.id)?.published_at);
    if (FULL) expect(fetched).toMatchObject({ status: 'published', published_at: fake.getPost(post.id)?.published_at });
    // Every delivery was answered 2xx at the first attempt, and verifies with the default options.
    expect(fake.deliveries.map((d) => [d.event, d.attempt, d.status])).toEqual([
      ['post.scheduled', 1, 204],
      ['post.published', 1, 204],
    ]);
    for (const delivery of fake.deliveries) {
      const event = await verifyWebhook({ body: delivery.body, signature: delivery.headers, secret: SECRET });
      expect(event.event).toBe(delivery.event);
    }

    // 6. Analytics of the published post.
    const analytics = await client.analytics.getPost(post.id);
    if (FULL) expect(analytics.post_id).toBe(post.id);
    if (FULL) expect(analytics.impressions).toBeGreaterThan(0);
    if (FAKE_PROFILE === 'minimal') expect(analytics).toEqual({});

    // 7. The access token expires on the service's clock. The SDK trusts only its own clock, which still
    //    says "fresh": its next call gets a 401 and refreshes through forceRefresh, then retries once.
    expect(fake.stats.tokenRequests.refresh_token).toBe(0);
    await fake.clock.advance(3_600_000);
    const account = await client.accounts.get('acc_demo_x');
    expect(account.id).toBe('acc_demo_x');
    if (FULL) expect(account.name).toBe('Demo on X');
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);
    expect(fake.stats.requests['GET /accounts/{id}']).toBe(2); // the 401, then the retry
    expect(saved).toHaveLength(1);
    expect(saved[0]?.accessToken).not.toBe(tokens.accessToken);
    expect((await manager.getTokens())?.refreshToken).toBe(saved[0]?.refreshToken);
  });

  it('a receiver on the real clock accepts deliveries made after the fake clock moved past the tolerance', async () => {
    receiver = await startReceiver(SECRET, () => Date.now());
    started = await startFake({ webhookEndpoints: [{ url: receiver.url, secret: SECRET }], webhooks: { maxAttempts: 1 } });
    const { fake, baseUrl } = started;
    const client = new PostSched({ baseUrl, auth: fake.issueTokens().access_token });
    await fake.clock.advance(10 * 60_000); // 10 minutes ahead of the receiver: deliveries are still signed when sent
    await client.posts.create({ account_ids: ['acc_demo_x'], publish_at: new Date(fake.clock.now() + 60_000) });
    await fake.flushWebhooks();
    expect(receiver.refused).toEqual([]);
    expect(receiver.events.map((e) => e.event)).toEqual(['post.scheduled']);
    expect(fake.deliveries.map((d) => d.status)).toEqual([204]);
  });
});

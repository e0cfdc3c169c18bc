import { describe, expect, it, vi } from 'vitest';
import { createFakeService } from '@postsched/sdk/testing';
import { bearer, inFuture, jsonBody, start } from './helpers.js';

describe('the fake clock', () => {
  it('starts at the given time and only moves when told', async () => {
    const fake = createFakeService({ clock: { start: new Date('2030-01-01T00:00:00Z') } });
    expect(fake.clock.mode).toBe('manual');
    expect(new Date(fake.clock.now()).toISOString()).toBe('2030-01-01T00:00:00.000Z');
    await fake.clock.advance(1_500);
    expect(fake.clock.now()).toBe(Date.parse('2030-01-01T00:00:01.500Z'));
    await fake.clock.set(new Date('2030-01-02T00:00:00Z'));
    expect(new Date(fake.clock.now()).toISOString()).toBe('2030-01-02T00:00:00.000Z');
    await expect(fake.clock.set(new Date('2029-01-01T00:00:00Z'))).rejects.toThrow(RangeError);
    await expect(fake.clock.advance(-1)).rejects.toThrow(RangeError);
    await fake.close();
  });

  it('publishes every post due within one advance, in publish_at order', async () => {
    const h = await start('handler');
    const token = h.fake.issueTokens().access_token;
    const late = await (await h.call('/posts', jsonBody('POST', { account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake, 20_000) }, token))).json();
    const early = await (await h.call('/posts', jsonBody('POST', { account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake, 10_000) }, token))).json();
    await h.fake.clock.set(h.fake.clock.now() + 30_000);
    expect(h.fake.getPost(early.id)?.published_at).toBe(early.publish_at);
    expect(h.fake.getPost(late.id)?.published_at).toBe(late.publish_at);
    await h.close();
  });

  it('in real mode publishes on time without advancing, and advance still jumps ahead', async () => {
    const h = await start('handler', { clock: 'real' });
    const token = h.fake.issueTokens().access_token;
    const post = await (await h.call('/posts', jsonBody('POST', { account_ids: ['acc_demo_x'], publish_at: inFuture(h.fake, 30) }, token))).json();
    await vi.waitFor(() => expect(h.fake.getPost(post.id)?.status).toBe('published'), { timeout: 5_000, interval: 10 });
    await h.fake.clock.advance(3_600_000);
    expect((await h.call('/accounts', bearer(token))).status).toBe(401);
    await h.close();
  });
});

describe('closing the fake', () => {
  it('stops its loopback server', async () => {
    const fake = createFakeService();
    const { url } = await fake.listen();
    expect((await fetch(`${url}/accounts`)).status).toBe(401);
    await fake.close();
    await expect(fetch(`${url}/accounts`)).rejects.toThrow(TypeError);
  });
});

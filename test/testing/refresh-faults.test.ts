/**
 * Faults on the token endpoint after the service committed a rotation: the answer lost (connection dropped), or
 * held past the client's time-out. What the fake accepted, and what it accepts afterwards, under the policies.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAuthClient } from '@postsched/sdk';
import { createFakeService, type FakeServiceOptions } from '@postsched/sdk/testing';
import { CLIENT, type Harness, login, MODES, refreshRequest, start } from './helpers.js';

describe.each(MODES)('after-commit faults on /oauth/token over %s', (mode) => {
  let h: Harness;
  afterEach(() => h.close());
  const setup = async (options: FakeServiceOptions = {}) => {
    h = await start(mode, options);
    return login(h);
  };
  const refresh = (refreshToken: string, signal?: AbortSignal) => refreshRequest(h, refreshToken, {}, signal);
  /** Waits until the fake has received `n` token requests (the fault holds them; nothing here times anything). */
  const received = (n: number) => vi.waitFor(() => expect(h.fake.stats.requests['POST /oauth/token']).toBe(n));
  /** Waits until the service has acted on `n` token requests of the grant of `token` (code exchange included). */
  const committed = (token: string, n: number) => vi.waitFor(() => expect(h.fake.grantOf(token)?.tokenRequests).toBe(n));

  it('a lost answer: the rotation is committed, the client gets a dropped connection, the old token is spent', async () => {
    const tokens = await setup();
    h.fake.faults.reset({ path: '/oauth/token', afterCommit: true });
    await expect(refresh(tokens.refresh_token)).rejects.toThrow(TypeError);
    expect(h.fake.grantOf(tokens.refresh_token)).toMatchObject({ tokenRequests: 2, reuseEvents: 0 }); // code + refresh
    const retry = await refresh(tokens.refresh_token);
    expect(retry.status).toBe(400);
    expect(await retry.json()).toMatchObject({ error: 'invalid_grant' });
    expect(h.fake.stats.grants.reuseEvents).toBe(1);
  });

  it('a lost answer under an overlap window: the same token sent again at once is accepted', async () => {
    const tokens = await setup({ refreshPolicy: { rotation: 'rotate', reuseDetection: true, overlapMs: 10_000 } });
    h.fake.faults.reset({ path: '/oauth/token', afterCommit: true });
    await expect(refresh(tokens.refresh_token)).rejects.toThrow(TypeError);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    expect(h.fake.stats.grants).toEqual({ revocations: 0, reuseEvents: 0 });
  });

  it('a reset before the route acts rotates nothing: the same token is still good', async () => {
    const tokens = await setup();
    h.fake.faults.reset({ path: '/oauth/token' });
    await expect(refresh(tokens.refresh_token)).rejects.toThrow(TypeError);
    expect(h.fake.grantOf(tokens.refresh_token)?.tokenRequests).toBe(1); // the code exchange only
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
  });

  it('a late answer: committed at once, answered after `ms` of the fake clock', async () => {
    const tokens = await setup();
    h.fake.faults.hang({ path: '/oauth/token', afterCommit: true, ms: 30_000 });
    let status = 0;
    const pending = refresh(tokens.refresh_token).then((res) => (status = res.status));
    await committed(tokens.refresh_token, 2); // rotated already, the answer held
    await h.fake.clock.advance(29_999);
    expect(status).toBe(0);
    await h.fake.clock.advance(1);
    await pending;
    expect(status).toBe(200);
  });

  it('a client timing out before the late answer: the rotation stands, the old token is refused', async () => {
    const tokens = await setup();
    h.fake.faults.hang({ path: '/oauth/token', afterCommit: true });
    const timeout = new AbortController();
    const pending = refresh(tokens.refresh_token, timeout.signal);
    await committed(tokens.refresh_token, 2);
    timeout.abort(); // the client's time-out
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect((await refresh(tokens.refresh_token)).status).toBe(400);
  });

  it('a hang before the route acts with `ms` holds the request, then lets it through', async () => {
    const tokens = await setup();
    h.fake.faults.hang({ path: '/oauth/token', ms: 5_000 });
    const pending = refresh(tokens.refresh_token);
    await received(2);
    expect(h.fake.grantOf(tokens.refresh_token)?.tokenRequests).toBe(1); // not acted yet
    await h.fake.clock.advance(5_000);
    expect((await pending).status).toBe(200);
    expect(h.fake.grantOf(tokens.refresh_token)?.tokenRequests).toBe(2);
  });
});

describe('after-commit faults seen by the SDK', () => {
  it("OAuthClient's refresh fails when the answer is lost, though the service rotated the token", async () => {
    const fake = createFakeService({ apps: [CLIENT] });
    try {
      const { url } = await fake.listen();
      const oauth = new OAuthClient({ baseUrl: url, clientId: CLIENT.clientId, clientSecret: CLIENT.clientSecret, redirectUri: CLIENT.redirectUris[0] as string });
      const tokens = fake.issueTokenSet({ clientId: CLIENT.clientId });
      fake.faults.reset({ path: '/oauth/token', afterCommit: true });
      await expect(oauth.refresh(tokens)).rejects.toBeInstanceOf(Error);
      expect(fake.grantOf(tokens.refreshToken as string)).toMatchObject({ revoked: false });
      expect(fake.grantOf(tokens.refreshToken as string)?.tokenRequests).toBeGreaterThanOrEqual(1); // committed
      await expect(oauth.refresh(tokens)).rejects.toMatchObject({ error: 'invalid_grant' }); // spent by the lost answer
    } finally {
      await fake.close();
    }
  });
});

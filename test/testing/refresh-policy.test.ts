/**
 * The fake's refresh-token policies (`refreshPolicy`): what its token endpoint accepts and refuses under each, on
 * the fake's clock, and the grant counters a test reads (`fake.grantOf`, `fake.stats.grants`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OAuthClient, ValidationError } from '@postsched/sdk';
import { createFakeService, type FakeServiceOptions } from '@postsched/sdk/testing';
import { bearer, CLIENT, type Harness, login, MODES, refreshRequest, start } from './helpers.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe.each(MODES)('refresh policies over %s', (mode) => {
  let h: Harness;
  afterEach(() => h.close());
  const setup = async (options: FakeServiceOptions = {}) => {
    h = await start(mode, options);
    return login(h);
  };
  /** One refresh with plain fetch: the status, and the answer's body. */
  const refresh = async (refreshToken: string) => {
    const res = await refreshRequest(h, refreshToken);
    const body = (await res.json()) as Record<string, string | number>;
    return { status: res.status, error: body['error'], refreshToken: body['refresh_token'] as string, accessToken: body['access_token'] as string, expiresIn: body['expires_in'] };
  };
  const api = async (accessToken: string) => (await h.call('/accounts', bearer(accessToken))).status;

  it('by default rotates: a refresh token is single use, and a reuse is refused without revoking the grant', async () => {
    const tokens = await setup();
    const next = await refresh(tokens.refresh_token);
    expect(next).toMatchObject({ status: 200 });
    expect(next.refreshToken).not.toBe(tokens.refresh_token);
    expect(await refresh(tokens.refresh_token)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect((await refresh(next.refreshToken)).status).toBe(200);
    expect(h.fake.grantOf(next.refreshToken)).toMatchObject({ revoked: false, reuseEvents: 1, tokenRequests: 4 }); // code + 3
    expect(h.fake.stats.grants).toEqual({ revocations: 0, reuseEvents: 1 });
  });

  it('static: the refresh token never changes and is accepted again and again', async () => {
    const tokens = await setup({ refreshPolicy: { rotation: 'static' } });
    for (let i = 0; i < 3; i++) {
      const next = await refresh(tokens.refresh_token);
      expect(next).toMatchObject({ status: 200, refreshToken: tokens.refresh_token });
      expect(await api(next.accessToken)).toBe(200);
    }
    expect(h.fake.stats.grants).toEqual({ revocations: 0, reuseEvents: 0 });
  });

  it('rotate with reuse detection: reusing a rotated-out token revokes every token of the grant', async () => {
    const tokens = await setup({ refreshPolicy: { rotation: 'rotate', reuseDetection: true } });
    const next = await refresh(tokens.refresh_token);
    expect(await api(next.accessToken)).toBe(200);
    expect(await refresh(tokens.refresh_token)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(await refresh(next.refreshToken)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(await api(next.accessToken)).toBe(401);
    expect(h.fake.grantOf(next.accessToken)).toMatchObject({ revoked: true, reuseEvents: 1 });
    expect(h.fake.stats.grants).toEqual({ revocations: 1, reuseEvents: 1 });
  });

  it('keeps `refreshTokenReuse: revoke-grant` as reuse detection', async () => {
    const tokens = await setup({ refreshTokenReuse: 'revoke-grant' });
    const next = await refresh(tokens.refresh_token);
    await refresh(tokens.refresh_token);
    expect(await refresh(next.refreshToken)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(h.fake.stats.grants.revocations).toBe(1);
  });

  it('an overlap window: the rotated-out token is accepted for overlapMs of the fake clock, then is a reuse', async () => {
    const tokens = await setup({ refreshPolicy: { rotation: 'rotate', reuseDetection: true, overlapMs: 10_000 } });
    const first = await refresh(tokens.refresh_token);
    await h.fake.clock.advance(9_999);
    const again = await refresh(tokens.refresh_token); // a client whose answer was lost, retrying in time
    expect(again.status).toBe(200);
    expect(again.refreshToken).not.toBe(first.refreshToken);
    expect(h.fake.stats.grants.reuseEvents).toBe(0);
    await h.fake.clock.advance(1);
    expect(await refresh(tokens.refresh_token)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(h.fake.stats.grants).toEqual({ revocations: 1, reuseEvents: 1 });
    expect((await refresh(again.refreshToken)).status).toBe(400);
  });

  it('retain-until-used: the old token is accepted until the new refresh token is used', async () => {
    const tokens = await setup({ refreshPolicy: { rotation: 'retain-until-used' } });
    const first = await refresh(tokens.refresh_token);
    await h.fake.clock.advance(30 * DAY); // no window: only the use of the new one counts
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    expect((await refresh(first.refreshToken)).status).toBe(200); // the new one used: the old one retires
    expect(await refresh(tokens.refresh_token)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(h.fake.stats.grants).toEqual({ revocations: 0, reuseEvents: 1 });
  });

  it('retain-until-used: an API call with the new access token retires the old refresh token too', async () => {
    const tokens = await setup({ refreshPolicy: { rotation: 'retain-until-used', reuseDetection: true } });
    const first = await refresh(tokens.refresh_token);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    expect(await api(first.accessToken)).toBe(200);
    expect(await refresh(tokens.refresh_token)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(h.fake.grantOf(tokens.refresh_token)).toMatchObject({ revoked: true, reuseEvents: 1 });
    expect(await api(first.accessToken)).toBe(401);
  });

  it('an absolute grant lifetime: expires_in is cut at the end, then the grant ends with invalid_grant', async () => {
    const tokens = await setup({ refreshPolicy: { rotation: 'static', grantLifetimeMs: 2 * HOUR + 30 * 60_000 } });
    expect(tokens.expires_in).toBe(3600);
    await h.fake.clock.advance(2 * HOUR);
    const last = await refresh(tokens.refresh_token);
    expect(last).toMatchObject({ status: 200, expiresIn: 1800 }); // the last access token does not outlive the grant
    await h.fake.clock.advance(30 * 60_000 - 1);
    expect(await api(last.accessToken)).toBe(200);
    await h.fake.clock.advance(1);
    expect(await api(last.accessToken)).toBe(401);
    expect(await refresh(tokens.refresh_token)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(h.fake.grantOf(tokens.refresh_token)?.endsAt).toBe(h.fake.clock.now());
  });

  it('an idle lifetime: a refresh token unused for idleLifetimeMs is refused; each use restarts its time', async () => {
    const tokens = await setup({ refreshPolicy: { rotation: 'static', idleLifetimeMs: 7 * DAY } });
    await h.fake.clock.advance(7 * DAY - 1);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    await h.fake.clock.advance(7 * DAY - 1);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    await h.fake.clock.advance(7 * DAY);
    expect(await refresh(tokens.refresh_token)).toMatchObject({ status: 400, error: 'invalid_grant' });
  });
});

describe('refresh policies through the SDK', () => {
  it("OAuthClient refreshes twice from the same TokenSet under 'static' and under 'retain-until-used'", async () => {
    for (const rotation of ['static', 'retain-until-used'] as const) {
      const fake = createFakeService({ apps: [CLIENT], refreshPolicy: { rotation } });
      try {
        const { url } = await fake.listen();
        const oauth = new OAuthClient({ baseUrl: url, clientId: CLIENT.clientId, clientSecret: CLIENT.clientSecret, redirectUri: CLIENT.redirectUris[0] as string });
        const tokens = fake.issueTokenSet({ clientId: CLIENT.clientId });
        await oauth.refresh(tokens);
        const again = await oauth.refresh(tokens);
        expect(again.refreshToken === tokens.refreshToken).toBe(rotation === 'static');
        expect(fake.grantOf(tokens.refreshToken as string)).toMatchObject({ revoked: false, tokenRequests: 2, reuseEvents: 0 });
      } finally {
        await fake.close();
      }
    }
  });

  it('refuses a policy it cannot follow, naming the option', () => {
    expect(() => createFakeService({ refreshPolicy: { rotation: 'rolling' as 'rotate' } })).toThrow(/refreshPolicy\.rotation/);
    expect(() => createFakeService({ refreshPolicy: { rotation: 'static', overlapMs: 1000 } })).toThrow(ValidationError);
    expect(() => createFakeService({ refreshPolicy: { idleLifetimeMs: -1 } })).toThrow(/refreshPolicy\.idleLifetimeMs/);
    expect(() => createFakeService({ refreshPolicy: { overlap: 5 } as never })).toThrow(ValidationError);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  MemoryTokenStore,
  OAuthError,
  PostSched,
  ReauthorizationRequiredError,
  TokenManager,
  type TokenSet,
} from '@postsched/sdk';
import { authorize, login, startFake, type Started } from './harness.js';

let started: Started | undefined;
afterEach(async () => {
  await started?.fake.close();
  started = undefined;
});

describe('OAuth against the fake over HTTP on 127.0.0.1', () => {
  it('rotates refresh tokens: the old one is refused after use, and TokenManager keeps working with the new one', async () => {
    started = await startFake();
    const { fake, baseUrl, oauth } = started;
    const first = await login(oauth);
    const saved: TokenSet[] = [];
    const store = new MemoryTokenStore(first);
    const manager = new TokenManager({ oauth, store, onTokens: (t) => void saved.push(t) });
    const client = new PostSched({ baseUrl, auth: manager });

    // First expiry: the 401 path refreshes with the first refresh token.
    await fake.clock.advance(3_600_000);
    await client.accounts.list().toArray();
    expect(saved).toHaveLength(1);
    const second = saved[0] as TokenSet;
    expect(second.refreshToken).toBeDefined();
    expect(second.refreshToken).not.toBe(first.refreshToken);

    // The spent refresh token is dead: the service answers invalid_grant, which means "authorize again".
    const replay = await oauth.refresh(first).catch((e: unknown) => e);
    expect(replay).toBeInstanceOf(ReauthorizationRequiredError);
    expect(replay).toBeInstanceOf(OAuthError);
    expect(replay).toMatchObject({ error: 'invalid_grant', reason: 'invalid_grant', status: 400 });
    expect(String((replay as Error).message)).not.toContain(first.refreshToken);

    // Second expiry: the manager uses the rotated token it stored, not the dead one.
    await fake.clock.advance(3_600_000);
    await client.accounts.list().toArray();
    expect(saved).toHaveLength(2);
    expect(saved[1]?.refreshToken).not.toBe(second.refreshToken);
    expect((await store.get())?.refreshToken).toBe(saved[1]?.refreshToken);
    expect(fake.stats.tokenRequests.refresh_token).toBe(3); // two by the manager, one refused replay
  });

  it('with a stricter service that revokes the grant on reuse, the user must authorize again', async () => {
    started = await startFake({ refreshTokenReuse: 'revoke-grant' });
    const { fake, baseUrl, oauth } = started;
    const first = await login(oauth);
    const manager = new TokenManager({ oauth, store: new MemoryTokenStore(first) });
    const client = new PostSched({ baseUrl, auth: manager });
    await fake.clock.advance(3_600_000);
    await client.accounts.list().toArray(); // refreshed once, legitimately
    await expect(oauth.refresh(first)).rejects.toBeInstanceOf(ReauthorizationRequiredError); // a replay: the grant dies
    await fake.clock.advance(3_600_000);
    await expect(client.accounts.list().toArray()).rejects.toMatchObject({ name: 'ReauthorizationRequiredError', reason: 'invalid_grant' });
  });

  it('refuses a replayed authorization code (invalid_grant) and revokes the tokens issued from it', async () => {
    started = await startFake();
    const { baseUrl, oauth } = started;
    const { callback, pending } = await authorize(oauth);
    const tokens = await oauth.exchangeCode(callback, pending);
    const replay = await oauth.exchangeCode(callback, pending).catch((e: unknown) => e);
    expect(replay).toBeInstanceOf(OAuthError);
    expect(replay).not.toBeInstanceOf(ReauthorizationRequiredError);
    expect(replay).toMatchObject({ error: 'invalid_grant', status: 400 });
    expect(String((replay as Error).message)).not.toContain(new URL(callback).searchParams.get('code'));
    // RFC 6749 §4.1.2: the fake revokes what the code gave; the access token now gets a 401.
    const client = new PostSched({ baseUrl, auth: tokens.accessToken });
    await expect(client.accounts.list().toArray()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('refuses the code with a verifier other than the one of its challenge (PKCE)', async () => {
    started = await startFake();
    const { fake, oauth } = started;
    const { callback, pending } = await authorize(oauth);
    const { codeVerifier: otherVerifier } = await oauth.createAuthorizationUrl({ scopes: ['accounts:read'] });
    const error = await oauth.exchangeCode(callback, { ...pending, codeVerifier: otherVerifier }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({ error: 'invalid_grant', status: 400 });
    expect(String((error as Error).message)).not.toContain(otherVerifier);
    expect(fake.stats.tokenRequests.authorization_code).toBe(1);
  });

  it('refuses a callback whose state differs before any token request', async () => {
    started = await startFake();
    const { fake, oauth } = started;
    const { callback, pending } = await authorize(oauth);
    await expect(oauth.exchangeCode(callback, { ...pending, state: 'another_state' })).rejects.toMatchObject({
      name: 'OAuthCallbackError',
      code: 'state_mismatch',
    });
    expect(fake.stats.tokenRequests.authorization_code).toBe(0);
  });

  it('turns a declined consent into OAuthError access_denied', async () => {
    started = await startFake({ consent: 'deny' });
    const { oauth } = started;
    const { callback, pending } = await authorize(oauth);
    await expect(oauth.exchangeCode(callback, pending)).rejects.toMatchObject({ name: 'OAuthError', error: 'access_denied' });
  });
});

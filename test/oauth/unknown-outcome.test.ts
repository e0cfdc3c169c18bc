/**
 * A refresh whose outcome is unknown (the request left, no answer came: a reset, a time-out) is sent again at once,
 * once, with the same refresh token; refused then, the user's error is `refresh_outcome_unknown` and nothing is sent
 * again. A refresh that never left (connection refused) is not sent again. Against the fake service over HTTP, each
 * refresh policy; counted in token requests, never time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTokenStore, OAuthClient, ReauthorizationRequiredError, TokenManager, type TokenSet, type TokenStore } from '@postsched/sdk';
import { createFakeService, type FakeService, type RefreshPolicy } from '@postsched/sdk/testing';

const APP = { clientId: 'app_unknown', clientSecret: 'secret_unknown_1234', redirectUris: ['http://127.0.0.1/callback'] };
let fake: FakeService | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** A user whose access token expired, on a fake with `policy`; the client's time-out is short (a hung answer). */
async function user(policy: RefreshPolicy, store?: (tokens: TokenSet) => TokenStore) {
  const f = (fake = createFakeService({ apps: [APP], refreshPolicy: policy }));
  const { url } = await f.listen();
  const tokens = { ...f.issueTokenSet({ clientId: APP.clientId }), expiresAt: Date.now() - 1_000 };
  const oauth = new OAuthClient({ baseUrl: url, clientId: APP.clientId, clientSecret: APP.clientSecret, redirectUri: APP.redirectUris[0]!, timeoutMs: 300 });
  const manager = new TokenManager({ oauth, store: store?.(tokens) ?? new MemoryTokenStore(tokens) });
  const grant = () => f.grantOf(tokens.refreshToken!)!;
  return { fake: f, manager, grant, url };
}

const FAULTS = {
  'the answer is lost after the service rotated': (f: FakeService) => f.faults.reset({ path: '/oauth/token', afterCommit: true }),
  "the answer comes after the client's time-out": (f: FakeService) => f.faults.hang({ path: '/oauth/token', afterCommit: true }),
};

describe('a refresh whose outcome is unknown', () => {
  describe.each(Object.entries(FAULTS))('%s', (_, fault) => {
    it.each<[string, RefreshPolicy]>([
      ['static', { rotation: 'static' }],
      ['an overlap window', { rotation: 'rotate', overlapMs: 10_000, reuseDetection: true }],
      ['retain-until-used', { rotation: 'retain-until-used', reuseDetection: true }],
    ])('%s: sent again at once with the same token, accepted: the call succeeds, 2 token requests, the grant lives', async (_, policy) => {
      const { fake: f, manager, grant } = await user(policy);
      fault(f);
      expect(await manager.getAccessToken()).toMatch(/^at_/);
      expect(grant()).toMatchObject({ tokenRequests: 2, revoked: false, reuseEvents: 0 });
      expect(await manager.getAccessToken()).toMatch(/^at_/); // held: no further request
      expect(grant().tokenRequests).toBe(2);
    });

    it.each<[string, RefreshPolicy, boolean]>([
      ['strict rotation', { rotation: 'rotate' }, false],
      ['strict rotation with reuse detection', { rotation: 'rotate', reuseDetection: true }, true],
    ])('%s: the user is lost whatever the client does; reported as refresh_outcome_unknown, once, with 1 further token request', async (_, policy, revoked) => {
      const { fake: f, manager, grant } = await user(policy);
      fault(f);
      const errors = [];
      for (let call = 0; call < 4; call++) errors.push(await manager.getAccessToken().catch((e: unknown) => e));
      for (const error of errors) expect(error).toMatchObject({ name: 'ReauthorizationRequiredError', reason: 'refresh_outcome_unknown' });
      expect(grant()).toMatchObject({ tokenRequests: 2, revoked, reuseEvents: 1 });
    });
  });

  it('a refresh that never left (connection refused) is not sent again', async () => {
    let sent = 0;
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
    const oauth = new OAuthClient({ baseUrl: 'http://127.0.0.1:1', clientId: 'c', clientSecret: 's', redirectUri: APP.redirectUris[0]!, fetch: async () => (sent++, Promise.reject(refused)) });
    const manager = new TokenManager({ oauth, store: new MemoryTokenStore({ accessToken: 'at', refreshToken: 'rt', expiresAt: 0, scopes: [], tokenType: 'bearer' }) });
    await expect(manager.getAccessToken()).rejects.toMatchObject({ name: 'ConnectionError' });
    expect(sent).toBe(1);
  });

  it("a lock taken over from a holder that never released it (killed between the answer and the save): the stored token is sent once; refused, it is refresh_outcome_unknown", async () => {
    const lockingStore = (tokens: TokenSet): TokenStore =>
      Object.assign(new MemoryTokenStore(tokens), { lock: <T>(fn: () => Promise<T>, options?: { onTakeover?: () => void }) => (options?.onTakeover?.(), fn()) });
    const { manager, grant, url } = await user({ rotation: 'rotate' }, lockingStore);
    // The dead holder's refresh: the service rotated, nobody saved the answer.
    const stored = await manager.getTokens();
    await new OAuthClient({ baseUrl: url, clientId: APP.clientId, clientSecret: APP.clientSecret, redirectUri: APP.redirectUris[0]! }).refresh(stored!);
    const error = await manager.getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReauthorizationRequiredError);
    expect(error).toMatchObject({ reason: 'refresh_outcome_unknown' });
    expect(grant().tokenRequests).toBe(2);
  });
});

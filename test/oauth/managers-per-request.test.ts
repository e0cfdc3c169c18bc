/**
 * Issue 20: several TokenManagers of one user in one process (a manager made per request, or made again after a
 * cache evicted one), each on its own MemoryTokenStore (no lock), against a service that revokes the whole grant when
 * a rotated-out refresh token comes back. The process shares one refresh per refresh token and remembers the
 * rotations it has seen, so no manager ever sends a refresh token the process has seen replaced.
 */
import { describe, expect, it } from 'vitest';
import { MemoryTokenStore, OAuthClient, TokenManager, type TokenRefresher, type TokenSet } from '@postsched/sdk';
import { createFakeService } from '@postsched/sdk/testing';
import { REMEMBERED_ROTATIONS, newestKnown, recordStored, refreshOnce } from '../../src/oauth/shared-refresh.js';

const APP = { clientId: 'app_per_request', clientSecret: 'secret_per_request_1234', redirectUris: ['http://127.0.0.1/callback'] };

function setUp() {
  const fake = createFakeService({ apps: [APP], refreshTokenReuse: 'revoke-grant' });
  const oauth = new OAuthClient({
    baseUrl: fake.baseUrl,
    clientId: APP.clientId,
    clientSecret: APP.clientSecret,
    redirectUri: APP.redirectUris[0]!,
    fetch: (url, init) => fake.handler(new Request(url, init)),
  });
  /** Whether the service still honours `accessToken` (its grant was not revoked). */
  const honoured = async (accessToken: string) =>
    (await fake.handler(new Request(`${fake.baseUrl}/accounts`, { headers: { authorization: `Bearer ${accessToken}` } }))).status === 200;
  return { fake, oauth, honoured };
}

async function inLanes<T>(items: T[], lanes: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

describe('managers of one user in one process, each on its own MemoryTokenStore', () => {
  it('100 users × 10 requests at concurrency 50, a fresh manager per request on the tokens stored at sign-in, all expired: no failure, nobody logged out, one refresh per user', async () => {
    const { fake, oauth, honoured } = setUp();
    const signedIn = Array.from({ length: 100 }, () => ({ ...fake.issueTokenSet({ clientId: APP.clientId }), expiresAt: Date.now() - 1_000 }));
    const requests = signedIn.flatMap((_, user) => Array.from({ length: 10 }, () => user)).sort(() => Math.random() - 0.5);
    const lastToken: string[] = [];
    const stores: Array<{ user: number; store: MemoryTokenStore }> = [];
    let failed = 0;

    await inLanes(requests, 50, async (user) => {
      const store = new MemoryTokenStore(signedIn[user]);
      stores.push({ user, store });
      try {
        lastToken[user] = await new TokenManager({ oauth, store }).getAccessToken();
      } catch {
        failed++;
      }
    });

    expect(failed).toBe(0);
    expect(fake.stats.tokenRequests.refresh_token).toBe(100);
    const loggedOut = (await Promise.all(lastToken.map(honoured))).filter((ok) => !ok).length;
    expect(loggedOut).toBe(0);
    // Each manager wrote the newer tokens into its own store (compare-and-set over the ones it was given).
    for (const { user, store } of stores) expect((await store.get())!.accessToken).toBe(lastToken[user]);
  });

  it('a manager made again after the first one refreshed takes its tokens instead of sending the rotated-out refresh token', async () => {
    const { fake, oauth, honoured } = setUp();
    const signedIn = { ...fake.issueTokenSet({ clientId: APP.clientId }), expiresAt: Date.now() - 1_000 };
    const first = await new TokenManager({ oauth, store: new MemoryTokenStore(signedIn) }).getAccessToken();
    // A 401 in a second request: its manager's store still holds the sign-in tokens, whose refresh token is dead.
    const again = new TokenManager({ oauth, store: new MemoryTokenStore(signedIn) });
    const second = await again.forceRefresh(signedIn.accessToken);

    expect(second).toBe(first);
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);
    expect(await honoured(second)).toBe(true);
  });
});

describe('the process-wide memory of rotations', () => {
  const tokens = (n: number): TokenSet => ({ accessToken: `at_${n}`, refreshToken: `rt_${n}`, expiresAt: 1_000 + n, scopes: [], tokenType: 'bearer' });

  it('shares one refresh per refresh token, and never sends one it has seen replaced', async () => {
    let sent = 0;
    const oauth: TokenRefresher = { refresh: async (previous) => (sent++, tokens(Number(previous.refreshToken!.slice(3)) + 1)) };
    const [a, b] = await Promise.all([refreshOnce(oauth, tokens(1)), refreshOnce(oauth, tokens(1))]);
    expect([a.refreshToken, b.refreshToken, sent]).toEqual(['rt_2', 'rt_2', 1]);
    expect((await refreshOnce(oauth, tokens(1))).refreshToken).toBe('rt_2');
    await refreshOnce(oauth, tokens(2));
    expect(newestKnown(oauth, tokens(1)).refreshToken).toBe('rt_3'); // follows the chain
    expect(sent).toBe(2);
  });

  it(`is bounded: past ${REMEMBERED_ROTATIONS} rotations the oldest are forgotten`, async () => {
    const oauth: TokenRefresher = { refresh: async (previous) => tokens(Number(previous.refreshToken!.slice(3)) + 1_000_000) };
    for (let n = 0; n <= REMEMBERED_ROTATIONS; n++) recordStored(oauth, await refreshOnce(oauth, tokens(n))); // each one saved
    expect(newestKnown(oauth, tokens(0))).toEqual(tokens(0));
    expect(newestKnown(oauth, tokens(1)).refreshToken).toBe('rt_1000001');
  });

  it(`never forgets a rotation no store holds: a save that failed, then ${REMEMBERED_ROTATIONS + 1} other rotations`, async () => {
    const sent = new Set<string>();
    let reused = 0;
    let issued = 0;
    const oauth: TokenRefresher = {
      refresh: async (previous) => {
        if (sent.has(previous.refreshToken!)) reused++; // the service would revoke the grant
        sent.add(previous.refreshToken!);
        return { ...tokens(++issued), expiresAt: Date.now() + 3_600_000 };
      },
    };
    const expired = (n: number): TokenSet => ({ ...tokens(-n), expiresAt: Date.now() - 1_000 });
    // The user's store fails one write: the manager (made per request) refreshed, could not save, and is dropped.
    const userStore = new MemoryTokenStore(expired(0));
    let failNextSet = true;
    const flaky = {
      get: () => userStore.get(),
      set: (t: TokenSet, options?: { expectedRefreshToken?: string }) => {
        if (!failNextSet) return userStore.set(t, options);
        failNextSet = false;
        return Promise.reject(new Error('database blip'));
      },
    };
    await expect(new TokenManager({ oauth, store: flaky }).getAccessToken()).rejects.toThrow();
    // The process goes on rotating other users' tokens.
    for (let n = 1; n <= REMEMBERED_ROTATIONS + 1; n++) await new TokenManager({ oauth, store: new MemoryTokenStore(expired(n)) }).getAccessToken();
    // The user's next request: its store still holds the rotated-out refresh token.
    const token = await new TokenManager({ oauth, store: flaky }).getAccessToken();
    expect(reused).toBe(0);
    expect(token).toBe('at_1'); // the rotation the failed save lost, written back
    expect((await userStore.get())?.refreshToken).toBe('rt_1');
  });
});

/**
 * Dead grants in one process and between two (two `UserClients` over the same stores, each with its own refresher:
 * two app processes): a refusal ends a grant only once the access token held has expired; the store's mark then
 * makes every call fail locally, reported once across both; `grantStatus`, `onReconnected`, `disconnect`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryTokenStore, OAuthClient, OAuthError, ReauthorizationRequiredError, ValidationError, TokenManager, type TokenRefresher, type TokenSet, type TokenStore, UserClients, type UserClientsOptions } from '@postsched/sdk';
import { createRig, type Rig } from './rig.js';

afterEach(() => {
  vi.useRealTimers();
});

/** Two processes of one app: two UserClients over the same stores, each its own refresher (its own memory). */
function twoProcesses(rig: Rig, options: Partial<UserClientsOptions> = {}, oauth?: OAuthClient) {
  const stores = new Map<string, TokenStore>();
  const told: Array<[number, string, string]> = [];
  const reconnected: Array<[number, string]> = [];
  const processes = [0, 1].map((p) => {
    const refresher: TokenRefresher = { refresh: (previous) => rig.refresher.refresh(previous), ...(oauth === undefined ? {} : { revoke: (tokens: TokenSet) => oauth.revoke(tokens) }) };
    return new UserClients({
      oauth: refresher,
      baseUrl: rig.fake.baseUrl,
      clientOptions: { fetch: rig.fetch, maxRetries: 0 },
      store: (userId) => stores.get(userId) ?? stores.set(userId, new MemoryTokenStore()).get(userId)!,
      onReauthorizationRequired: (userId, error) => void told.push([p, userId, error.reason]),
      onReconnected: (userId) => void reconnected.push([p, userId]),
      ...options,
    });
  });
  const calls = () => rig.fake.stats.requests['GET /accounts'] ?? 0;
  const tokenRequests = () => rig.fake.stats.tokenRequests.refresh_token;
  return { processes, stores, told, reconnected, calls, tokenRequests };
}

describe('a refused refresh token', () => {
  it('ends the grant only once the access token held expired: calls go on with it until then, and the store is marked once', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const sent: string[] = [];
    const oauth: TokenRefresher = {
      async refresh(previous) {
        sent.push(previous.refreshToken!);
        throw new ReauthorizationRequiredError('invalid_grant');
      },
    };
    const expiresAt = Date.now() + 30_000;
    const store = new MemoryTokenStore({ accessToken: 'at_1', refreshToken: 'rt_dead', expiresAt, scopes: [], tokenType: 'bearer' });
    let marked = 0;
    const manager = new TokenManager({ oauth, store, onMarked: () => marked++ });
    expect(await manager.getAccessToken()).toBe('at_1');
    // Past half its lifetime: refreshed first, refused; the access token is still valid for 10 s.
    vi.setSystemTime(expiresAt - 10_000);
    for (let call = 0; call < 5; call++) expect(await manager.getAccessToken()).toBe('at_1');
    expect({ sent, mark: (await store.getGrant()).reconnect, marked }).toEqual({ sent: ['rt_dead'], mark: undefined, marked: 0 });
    vi.setSystemTime(expiresAt);
    await expect(manager.getAccessToken()).rejects.toMatchObject({ reason: 'invalid_grant' });
    expect({ sent, mark: (await store.getGrant()).reconnect, marked }).toEqual({ sent: ['rt_dead'], mark: { reason: 'invalid_grant', since: Date.now() }, marked: 1 });
    // Another manager (another process: its own refresher, which never saw the refusal) reads the mark: no request.
    const other = { refresh: (previous: TokenSet) => oauth.refresh(previous) };
    await expect(new TokenManager({ oauth: other, store }).getAccessToken()).rejects.toMatchObject({ reason: 'invalid_grant' });
    expect(sent).toEqual(['rt_dead']);
  });
});

describe('dead grants between two processes (UserClients over shared stores)', () => {
  it('are reported once, cost no request in either process, show in grantStatus; a connect clears them (onReconnected once)', async () => {
    const rig = createRig();
    const { processes, told, reconnected, calls, tokenRequests } = twoProcesses(rig);
    const [a, b] = processes as [UserClients, UserClients];
    expect(await a.grantStatus('alice')).toEqual({ status: 'none' });
    await a.connect('alice', { ...rig.tokensFor('alice'), refreshToken: 'rt_the_service_does_not_know' });
    expect(await b.grantStatus('alice')).toEqual({ status: 'connected', refreshedAt: expect.any(Number) });
    await expect(a.client('alice').accounts.list().toArray()).rejects.toMatchObject({ reason: 'invalid_grant' });
    const requests = { calls: calls(), tokens: tokenRequests() };
    for (let i = 0; i < 5; i++) {
      for (const p of processes) await expect(p.client('alice').accounts.list().toArray()).rejects.toMatchObject({ reason: 'invalid_grant' });
    }
    expect({ calls: calls(), tokens: tokenRequests() }).toEqual(requests);
    expect(told).toEqual([[0, 'alice', 'invalid_grant']]);
    for (const p of processes) expect(await p.grantStatus('alice')).toEqual({ status: 'needs_reconnect', reason: 'invalid_grant', since: expect.any(Number), refreshedAt: expect.any(Number) });

    await b.connect('alice', rig.tokensFor('alice', false));
    await b.connect('alice', rig.tokensFor('alice', false)); // nothing left to clear
    expect(reconnected).toEqual([[1, 'alice']]);
    for (const p of processes) {
      expect(await p.grantStatus('alice')).toMatchObject({ status: 'connected' });
      expect(await p.client('alice').accounts.list().toArray()).toEqual(expect.any(Array));
    }
  });

  it('an expired access token without a refresh token is a dead grant too: reported once, marked no_refresh_token', async () => {
    const rig = createRig();
    const { processes, told, calls } = twoProcesses(rig);
    const { refreshToken: _, ...tokens } = rig.tokensFor('alice');
    await processes[0]!.connect('alice', tokens);
    for (const p of [...processes, ...processes]) await expect(p.client('alice').accounts.list().toArray()).rejects.toMatchObject({ reason: 'no_refresh_token' });
    expect({ told, calls: calls() }).toEqual({ told: [[0, 'alice', 'no_refresh_token']], calls: 0 });
    expect(await processes[1]!.grantStatus('alice')).toMatchObject({ status: 'needs_reconnect', reason: 'no_refresh_token' });
  });

  it('a store without marks (no getGrant) keeps the report per process', async () => {
    const rig = createRig();
    const memory = new Map<string, MemoryTokenStore>();
    const { processes, told } = twoProcesses(rig, {
      store: (userId) => {
        const store = memory.get(userId) ?? memory.set(userId, new MemoryTokenStore()).get(userId)!;
        return { get: () => store.get(), set: (tokens, options) => store.set(tokens, options) };
      },
    });
    await processes[0]!.connect('alice', { ...rig.tokensFor('alice'), refreshToken: 'rt_the_service_does_not_know' });
    for (const p of processes) await p.client('alice').accounts.list().toArray().catch(() => {});
    expect(told).toEqual([[0, 'alice', 'invalid_grant'], [1, 'alice', 'invalid_grant']]);
    expect(await processes[1]!.grantStatus('alice')).toEqual({ status: 'needs_reconnect', reason: 'invalid_grant' });
  });
});

describe('users.disconnect', () => {
  it.each([true, false])('deletes the tokens for every process, none written back; revokes only with a revocationEndpoint (%s)', async (revocation) => {
    const rig = createRig();
    const app = rig.fake.registerApp({ redirectUris: ['https://app.example/callback'] });
    const oauth = new OAuthClient({ baseUrl: rig.fake.baseUrl, clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: 'https://app.example/callback', fetch: rig.fetch, ...(revocation ? { revocationEndpoint: '/oauth/revoke' } : {}) });
    const { processes, stores, told, tokenRequests } = twoProcesses(rig, {}, oauth);
    const [a, b] = processes as [UserClients, UserClients];
    const tokens = rig.fake.issueTokenSet({ clientId: app.clientId });
    await a.connect('alice', tokens);
    // Both processes hold alice's access token.
    for (const p of processes) await p.client('alice').accounts.list().toArray();
    await a.disconnect('alice');
    expect(rig.fake.stats.requests['POST /oauth/revoke'] ?? 0).toBe(revocation ? 1 : 0);
    expect(rig.fake.grantOf(tokens.refreshToken!)?.revoked).toBe(revocation);
    for (const p of processes) expect(await p.grantStatus('alice')).toEqual({ status: 'none' });
    // Process b still holds the tokens: a call after a 401 (or once they expire) reads the store, and neither refreshes
    // nor writes them back.
    await expect(b.manager('alice').forceRefresh(tokens.accessToken)).rejects.toMatchObject({ reason: 'no_tokens' });
    await expect(a.client('alice').accounts.list().toArray()).rejects.toMatchObject({ reason: 'no_tokens' });
    expect(await stores.get('alice')!.get()).toBeUndefined();
    expect({ tokenRequests: tokenRequests(), told }).toEqual({ tokenRequests: 0, told: [] });
  });
});

describe('OAuthClient.revoke (RFC 7009)', () => {
  it('sends nothing without a revocationEndpoint; with one, revokes the grant; a refused one is an OAuthError; a bad endpoint is refused', async () => {
    const rig = createRig();
    const app = rig.fake.registerApp({ redirectUris: ['https://app.example/callback'] });
    const options = { baseUrl: rig.fake.baseUrl, clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: 'https://app.example/callback', fetch: rig.fetch };
    const tokens = rig.fake.issueTokenSet({ clientId: app.clientId });
    expect(await new OAuthClient(options).revoke(tokens)).toBe(false);
    expect(rig.fake.stats.requests['POST /oauth/revoke'] ?? 0).toBe(0);
    expect(await new OAuthClient({ ...options, revocationEndpoint: `${rig.fake.baseUrl}/oauth/revoke` }).revoke(tokens)).toBe(true);
    expect(rig.fake.grantOf(tokens.refreshToken!)?.revoked).toBe(true);
    const refused = await new OAuthClient({ ...options, clientSecret: 'wrong', revocationEndpoint: '/oauth/revoke' }).revoke(tokens).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OAuthError);
    expect(refused).toMatchObject({ error: 'invalid_client' });
    expect(String((refused as Error).message)).not.toContain(tokens.refreshToken);
    expect(() => new OAuthClient({ ...options, revocationEndpoint: 'ftp://example.com/revoke' })).toThrow(ValidationError);
  });
});

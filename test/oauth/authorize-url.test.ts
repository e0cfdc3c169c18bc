import { describe, expect, it } from 'vitest';
import { OAuthClient, SCOPES, ValidationError } from '@postsched/sdk';
import { BASE_URL, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, caught, expectNoSecretsInCollectedErrors, extraSecrets, makeClient } from './helpers.js';

/** RFC 7636 §4.2 computed here, independently of the SDK and oauth4webapi. */
async function s256(verifier: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  return btoa(String.fromCharCode(...digest)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function base64urlBytes(value: string): number {
  expect(value).toMatch(/^[A-Za-z0-9_-]+$/);
  return Math.floor((value.length * 6) / 8);
}

describe('OAuthClient.createAuthorizationUrl', () => {
  it('builds the authorize URL with every parameter of spec 4.1 and a PKCE S256 challenge of the verifier', async () => {
    const oauth = makeClient();
    const { url, state, codeVerifier, scopes } = await oauth.createAuthorizationUrl({ scopes: ['posts:read', 'posts:write'] });
    extraSecrets.add(codeVerifier);
    const parsed = new URL(url);

    expect(`${parsed.origin}${parsed.pathname}`).toBe(`${BASE_URL}/oauth/authorize`);
    expect(parsed.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(parsed.searchParams.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(parsed.searchParams.get('response_type')).toBe('code');
    expect(parsed.searchParams.get('scope')).toBe('posts:read posts:write');
    expect(parsed.search).toContain('scope=posts%3Aread+posts%3Awrite'); // joined by `+` on the wire
    expect(parsed.searchParams.get('state')).toBe(state);
    expect(parsed.searchParams.get('code_challenge_method')).toBe('S256');
    expect(parsed.searchParams.get('code_challenge')).toBe(await s256(codeVerifier));
    expect(url).not.toContain(codeVerifier); // only the hash travels through the browser
    expect(parsed.searchParams.has('client_secret')).toBe(false);
    expect(scopes).toEqual(['posts:read', 'posts:write']);
  });

  it('makes a state of at least 32 random bytes and a new state and verifier on each call', async () => {
    const oauth = makeClient();
    const a = await oauth.createAuthorizationUrl({ scopes: ['accounts:read'] });
    const b = await oauth.createAuthorizationUrl({ scopes: ['accounts:read'] });
    extraSecrets.add(a.codeVerifier).add(b.codeVerifier);
    expect(base64urlBytes(a.state)).toBeGreaterThanOrEqual(32);
    expect(base64urlBytes(a.codeVerifier)).toBeGreaterThanOrEqual(32); // RFC 7636 §7.1: 256 bits of entropy
    expect(a.state).not.toBe(b.state);
    expect(a.codeVerifier).not.toBe(b.codeVerifier);
  });

  it('uses a state the caller gives', async () => {
    const { url, state } = await makeClient().createAuthorizationUrl({ scopes: ['media:write'], state: 'my-own-state' });
    expect(state).toBe('my-own-state');
    expect(new URL(url).searchParams.get('state')).toBe('my-own-state');
  });

  it('accepts all five scopes of the spec', async () => {
    const { url } = await makeClient().createAuthorizationUrl({ scopes: SCOPES });
    expect(new URL(url).searchParams.get('scope')).toBe(SCOPES.join(' '));
  });

  it.each([
    ['an empty list', [], /empty/, ['scopes']],
    ['a duplicate', ['posts:read', 'posts:read'], /scopes\[1\].*repeats "posts:read"/, ['scopes', 1]],
    ['a name with whitespace', ['posts:read posts:write'], /scopes\[0\].*whitespace/, ['scopes', 0]],
    ['an unknown scope', ['posts:read', 'posts:delete'], /scopes\[1\]` is "posts:delete".*not a scope/, ['scopes', 1]],
    ['a non-array', 'posts:read', /must be an array/, ['scopes']],
  ])('rejects %s before making any URL, naming the bad value', async (_name, scopes, message, path) => {
    const error = await caught(makeClient().createAuthorizationUrl({ scopes: scopes as never }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toMatch(message);
    expect((error as ValidationError).path).toEqual(path);
  });
});

describe('OAuthClient construction', () => {
  const options = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: REDIRECT_URI };

  it.each(['https://api.postsched.test', 'https://api.postsched.test/v1/', 'http://localhost:3000', 'http://127.0.0.1:8080', 'http://[::1]:9000'])(
    'accepts the base URL %s',
    (baseUrl) => {
      expect(() => new OAuthClient({ ...options, baseUrl })).not.toThrow();
    },
  );

  it('drops a trailing slash so the endpoints are {baseUrl}/oauth/…', async () => {
    const oauth = new OAuthClient({ ...options, baseUrl: 'https://api.postsched.test/v1/' });
    expect(oauth.baseUrl).toBe('https://api.postsched.test/v1');
    const { url } = await oauth.createAuthorizationUrl({ scopes: ['posts:read'] });
    expect(url.startsWith('https://api.postsched.test/v1/oauth/authorize?')).toBe(true);
  });

  it.each([
    ['plain http to a public host', 'http://api.postsched.test', /must use https.*localhost/],
    ['plain http to a host merely named like loopback', 'http://localhost.evil.test', /must use https/],
    ['a relative URL', '/api', /not a valid absolute URL/],
    ['a URL with credentials', 'https://user:pw@api.postsched.test', /user name or password/],
    ['a URL with a query', 'https://api.postsched.test/?x=1', /query or fragment/],
  ])('rejects %s with a ValidationError that says how to fix it', async (_name, baseUrl, message) => {
    const error = await caught(() => new OAuthClient({ ...options, baseUrl }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toMatch(message);
    expect((error as ValidationError).path).toEqual(['baseUrl']);
  });

  it.each([
    ['clientSecret', { clientSecret: '' }],
    ['clientId', { clientId: undefined }],
    ['redirectUri', { redirectUri: 'callback' }],
    ['timeoutMs', { timeoutMs: 0 }],
  ])('rejects a missing or bad %s', async (field, override) => {
    const error = await caught(() => new OAuthClient({ ...options, baseUrl: BASE_URL, ...(override as object) }));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual([field]);
  });

  it('shows no secret in any error thrown by these tests', () => {
    expectNoSecretsInCollectedErrors(14);
  });
});

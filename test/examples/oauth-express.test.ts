import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryTokenStore, OAuthClient } from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { FAKE_PROFILE, FAKE_PROFILE_OPTIONS, FULL } from '../support/fake-profile.js';
import { configFromEnv, createApp, type Config } from '../../examples/oauth-express.js';

/** A browser as far as this flow needs one: a cookie jar, redirects followed by hand (`redirect: 'manual'`). */
class Browser {
  readonly cookies = new Map<string, string>();
  readonly setCookieHeaders: string[] = [];

  async get(url: string): Promise<Response> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(url, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } });
    for (const header of response.headers.getSetCookie()) {
      this.setCookieHeaders.push(header);
      const [pair = ''] = header.split(';');
      const [name = '', ...value] = pair.split('=');
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(header)) this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value.join('='));
    }
    return response;
  }

  /** Follows redirects (across the app and the service) until a page answers; returns it and the URLs seen. */
  async visit(url: string, maxHops = 10): Promise<{ response: Response; html: string; urls: string[] }> {
    const urls = [url];
    let response = await this.get(url);
    while (response.status >= 300 && response.status < 400 && urls.length <= maxHops) {
      await response.body?.cancel();
      const next = new URL(response.headers.get('location') ?? '', urls.at(-1)).href;
      urls.push(next);
      response = await this.get(next);
    }
    return { response, html: await response.text(), urls };
  }
}

let fake: FakeService;
let server: Server;
let appUrl: string;
let config: Config;
const stores = new Map<string, MemoryTokenStore>();

beforeEach(async () => {
  fake = createFakeService({
    ...FAKE_PROFILE_OPTIONS,
    accounts: [
      { id: 'acc_1', platform: 'x', name: 'Acme on X' },
      { id: 'acc_2', platform: 'linkedin', name: '<b>Acme</b> & Co' },
    ],
  });
  const { url: serviceUrl } = await fake.listen();
  // The redirect URI needs the app's port, so the port comes first and the app second.
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const registered = fake.registerApp({ redirectUris: [`${appUrl}/callback`] });
  config = configFromEnv({
    POSTSCHED_BASE_URL: serviceUrl,
    POSTSCHED_CLIENT_ID: registered.clientId,
    POSTSCHED_CLIENT_SECRET: registered.clientSecret,
    POSTSCHED_REDIRECT_URI: `${appUrl}/callback`,
  });
  stores.clear();
  const app = createApp(config, {
    tokenStoreFor: (userId) => {
      const store = new MemoryTokenStore();
      stores.set(userId, store);
      return store;
    },
  });
  server.on('request', app);
  vi.spyOn(console, 'warn').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation(() => {});
});

afterEach(async () => {
  vi.restoreAllMocks();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await fake.close();
});

/** The first account's line: by name, or by id when the service's answer has no name (it is not in the spec). */
const FIRST_ACCOUNT = /<li>(Acme on X|acc_1)[ <]/;

const onlyStore = () => {
  expect(stores.size).toBe(1);
  return [...stores.values()][0] as MemoryTokenStore;
};

describe('examples/oauth-express.ts: the browser flow against the fake service on 127.0.0.1', () => {
  it('logs in through the service and lists the accounts, with state and verifier kept server-side', async () => {
    const browser = new Browser();
    const { response, html, urls } = await browser.visit(`${appUrl}/`);
    expect(response.status).toBe(200);
    expect(html).toContain('href="/login"');

    const login = await browser.visit(`${appUrl}/login`);
    const [, authorize, callback, accounts] = login.urls;
    expect(authorize).toMatch(new RegExp(`^${fake.baseUrl}/oauth/authorize\\?`));
    const authorizeUrl = new URL(authorize ?? '');
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('scope')).toBe('accounts:read posts:read posts:write media:write');
    expect(authorize).not.toContain('code_verifier');
    expect(callback).toMatch(new RegExp(`^${appUrl}/callback\\?code=`));
    expect(accounts).toBe(`${appUrl}/accounts`);
    expect(login.response.status).toBe(200);
    expect(login.html).toMatch(FIRST_ACCOUNT);
    // The account name is escaped, not rendered as HTML.
    expect(login.html).not.toContain('<b>Acme');
    if (FULL) {
      expect(login.html).toContain('<li>Acme on X <small>(x)</small></li>');
      expect(login.html).toContain('&#60;b&#62;Acme&#60;/b&#62; &#38; Co');
    }
    // Names and platforms are not in the service's spec: without them, the page lists the ids.
    if (FAKE_PROFILE === 'minimal') expect(login.html).toContain('<ul><li>acc_1</li><li>acc_2</li></ul>');

    // The TokenSet went through the TokenStore; nothing secret went to the browser.
    const tokens = await onlyStore().get();
    expect(tokens?.scopes).toEqual(['accounts:read', 'posts:read', 'posts:write', 'media:write']);
    expect(login.html).not.toContain(tokens?.accessToken);
    for (const header of browser.setCookieHeaders) {
      expect(header).toMatch(/^sid=[\w-]{43}; Max-Age=86400; Path=\/; Expires=.*; HttpOnly; SameSite=Lax$/);
    }
    expect(urls).toHaveLength(1);
  });

  it('gives a new session id after login (an id planted before login is worthless)', async () => {
    const browser = new Browser();
    await browser.get(`${appUrl}/`);
    const before = browser.cookies.get('sid');
    await browser.visit(`${appUrl}/login`);
    expect(browser.cookies.get('sid')).not.toBe(before);
    const planted = new Browser();
    planted.cookies.set('sid', before ?? '');
    const { urls } = await planted.visit(`${appUrl}/accounts`, 1);
    expect(urls[1]).toBe(`${appUrl}/login`);
  });

  it('keeps working after the access token expires: the manager refreshes it through the 401 path', async () => {
    const browser = new Browser();
    await browser.visit(`${appUrl}/login`);
    const first = await onlyStore().get();
    await fake.clock.advance(2 * 3_600_000); // the service's clock: the SDK's own clock still says "fresh"
    const { response, html } = await browser.visit(`${appUrl}/accounts`);
    expect(response.status).toBe(200);
    expect(html).toMatch(FIRST_ACCOUNT);
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);
    const second = await onlyStore().get();
    expect(second?.accessToken).not.toBe(first?.accessToken);
    expect(second?.refreshToken).not.toBe(first?.refreshToken); // the rotated refresh token was saved
  });

  it('answers "connection expired" with a way back when the refresh token no longer works', async () => {
    const browser = new Browser();
    await browser.visit(`${appUrl}/login`);
    // Someone else spends the stored refresh token (rotation makes the app's copy dead).
    const { port: _, ...oauthOptions } = config;
    await new OAuthClient(oauthOptions).refresh((await onlyStore().get())!);
    await fake.clock.advance(2 * 3_600_000);
    const { response, html } = await browser.visit(`${appUrl}/accounts`);
    expect(response.status).toBe(401);
    expect(html).toContain('Your PostSched connection has expired');
    expect(html).toContain('href="/login"');
    // Logging in again fixes it.
    const again = await browser.visit(`${appUrl}/login`);
    expect(again.response.status).toBe(200);
    expect(again.html).toMatch(FIRST_ACCOUNT);
  });

  it('answers "access not granted" when the user declines, and stores nothing', async () => {
    fake.setConsent('deny');
    const browser = new Browser();
    const { response, html, urls } = await browser.visit(`${appUrl}/login`);
    expect(new URL(urls.at(-1) ?? '').searchParams.get('error')).toBe('access_denied');
    expect(response.status).toBe(403);
    expect(html).toContain('Access not granted');
    expect(stores.size).toBe(0);
    expect(fake.stats.tokenRequests.authorization_code).toBe(0);
  });

  it('refuses a callback whose state is not the one this session started, without a token request', async () => {
    const browser = new Browser();
    const login = await browser.get(`${appUrl}/login`);
    const authorize = await fetch(login.headers.get('location') ?? '', { redirect: 'manual' });
    const callback = new URL(authorize.headers.get('location') ?? '');
    callback.searchParams.set('state', 'forged_state');
    const { response, html } = await browser.visit(callback.href);
    expect(response.status).toBe(400);
    expect(html).toContain('This sign-in could not be verified');
    expect(fake.stats.tokenRequests.authorization_code).toBe(0);
    expect(console.warn).toHaveBeenCalledWith('Refused OAuth callback: state_mismatch');
  });

  it('refuses a callback from another browser (no login in progress there)', async () => {
    const victim = new Browser();
    const login = await victim.get(`${appUrl}/login`);
    const authorize = await fetch(login.headers.get('location') ?? '', { redirect: 'manual' });
    const attacker = new Browser();
    const { response, html } = await attacker.visit(authorize.headers.get('location') ?? '');
    expect(response.status).toBe(400);
    expect(html).toContain('This sign-in has expired');
    expect(fake.stats.tokenRequests.authorization_code).toBe(0);
  });

  it('uses each callback once: a replayed callback URL gets "expired", not a second token request', async () => {
    const browser = new Browser();
    const { urls } = await browser.visit(`${appUrl}/login`);
    const callback = urls[2] ?? '';
    const replay = await browser.visit(callback);
    expect(replay.response.status).toBe(400);
    expect(replay.html).toContain('This sign-in has expired');
    expect(fake.stats.tokenRequests.authorization_code).toBe(1);
  });

  it('answers "refused" when the service refuses the code (here: it expired before the callback)', async () => {
    const browser = new Browser();
    const login = await browser.get(`${appUrl}/login`);
    const authorize = await fetch(login.headers.get('location') ?? '', { redirect: 'manual' });
    await fake.clock.advance(120_000); // authorization codes live 60 s
    const { response, html } = await browser.visit(authorize.headers.get('location') ?? '');
    expect(response.status).toBe(502);
    expect(html).toContain('PostSched refused the sign-in');
    expect(console.warn).toHaveBeenCalledWith('OAuth token request refused: invalid_grant');
  });

  it('sends a visitor who is not logged in to /login', async () => {
    const { urls } = await new Browser().visit(`${appUrl}/accounts`, 1);
    expect(urls[1]).toBe(`${appUrl}/login`);
  });

  it('names the missing environment variable and defaults the redirect URI to the port', () => {
    expect(() => configFromEnv({ POSTSCHED_BASE_URL: 'http://127.0.0.1:1' })).toThrow(/Set POSTSCHED_CLIENT_ID/);
    expect(configFromEnv({ POSTSCHED_BASE_URL: 'x', POSTSCHED_CLIENT_ID: 'c', POSTSCHED_CLIENT_SECRET: 's', PORT: '4000' }).redirectUri).toBe(
      'http://127.0.0.1:4000/callback',
    );
  });
});

/**
 * The fake's consent page in a real headless Chromium: a person opens the authorize URL the SDK built, sees the
 * app and the scopes, and clicks Allow or Deny; the browser lands on the app's redirect URI.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OAuthClient, OAuthError } from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { launchChromium } from '../support/browser.js';

let browser: Browser;
let app: Server; // the app's callback: a page that says "signed in", as an app's would
let redirectUri: string;

beforeAll(async () => {
  app = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>back in the app</h1>'));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`;
  browser = await launchChromium();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => app?.close(resolve));
});

describe('the consent page in headless Chromium', () => {
  let fake: FakeService;
  let oauth: OAuthClient;
  let page: Page;
  beforeEach(async () => {
    fake = createFakeService({
      consent: 'prompt',
      apps: [{ clientId: 'client_browser', clientSecret: 'secret_browser', redirectUris: [redirectUri], name: 'Acme Scheduler' }],
    });
    const { url } = await fake.listen();
    oauth = new OAuthClient({ baseUrl: url, clientId: 'client_browser', clientSecret: 'secret_browser', redirectUri });
    page = await browser.newPage();
  });
  afterEach(async () => {
    await page?.close();
    await fake?.close();
  });

  it('shows the app and the requested scopes; Allow lands on the redirect URI with code, state and iss', async () => {
    const pending = await oauth.createAuthorizationUrl({ scopes: ['accounts:read', 'posts:write'] });
    await page.goto(pending.url);
    expect(await page.title()).toBe('Authorize Acme Scheduler');
    expect(await page.locator('h1').innerText()).toBe('Acme Scheduler wants to use your Post Scheduling account');
    expect(await page.locator('#scopes li').allInnerTexts()).toEqual([
      'accounts:read List your connected social accounts',
      'posts:write Create, update and delete your posts',
    ]);

    await Promise.all([page.waitForURL((u) => u.href.startsWith(redirectUri)), page.locator('#allow').click()]);
    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(redirectUri);
    expect(landed.searchParams.get('code')).toMatch(/^code_/);
    expect(landed.searchParams.get('state')).toBe(pending.state);
    expect(landed.searchParams.get('iss')).toBe(fake.baseUrl);
    expect(await page.locator('h1').innerText()).toBe('back in the app');

    const tokens = await oauth.exchangeCode(page.url(), pending);
    expect(tokens.scopes).toEqual(['accounts:read', 'posts:write']);
  });

  it('Deny lands on the redirect URI with access_denied, which exchangeCode reports as an OAuthError', async () => {
    const pending = await oauth.createAuthorizationUrl({ scopes: ['posts:read'] });
    await page.goto(pending.url);
    await Promise.all([page.waitForURL((u) => u.href.startsWith(redirectUri)), page.getByRole('button', { name: 'Deny' }).click()]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('state')).toBe(pending.state);
    expect(landed.searchParams.has('code')).toBe(false);
    const error = await oauth.exchangeCode(page.url(), pending).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expect((error as OAuthError).error).toBe('access_denied');
  });
});

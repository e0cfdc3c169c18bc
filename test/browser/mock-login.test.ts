/**
 * From `npx postsched mock` to a signed-in user, as a person does it: the mock and `postsched login` run as child
 * processes with the mock's exports, and a real headless Chromium opens the printed URL and clicks Allow.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenSet } from '@postsched/sdk';
import { launchChromium } from '../support/browser.js';
import { freePort, type Running, startCli, startMock, stopAll } from '../support/processes.js';

let browser: Browser;
let mock: Running;
let env: Record<string, string>;
let dir: string;
let redirectUri: string; // login's loopback redirect, on a free port rather than its default 8976
beforeAll(async () => {
  redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
  [browser, { mock, env }, dir] = await Promise.all([
    launchChromium(),
    startMock(['--redirect-uri', redirectUri]),
    mkdtemp(join(tmpdir(), 'postsched-e2e-')),
  ]);
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stopAll(mock);
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('postsched mock + postsched login + a browser', () => {
  it('signs in through the consent page and saves tokens that work on the mock', async () => {
    const out = join(dir, 'tokens.json');
    const login = startCli(['login', '--scopes', 'accounts:read', '--redirect-uri', redirectUri, '--out', out], env);
    try {
      const [url] = await login.waitFor(/http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+/);
      const page = await browser.newPage();
      await page.goto(url);
      expect(await page.locator('#scopes li').allInnerTexts()).toEqual(['accounts:read List your connected social accounts']);
      await page.locator('#allow').click();
      await page.getByText('You can close this tab.').waitFor();
      expect(await login.exited).toBe(0);
      await page.close();
    } finally {
      await stopAll(login);
    }
    const tokens = JSON.parse(await readFile(out, 'utf8')) as TokenSet;
    const accounts = await fetch(`${env.POSTSCHED_BASE_URL}/accounts`, { headers: { authorization: `Bearer ${tokens.accessToken}` } });
    expect(accounts.status).toBe(200);
    await mock.waitFor(/POST \/oauth\/authorize → 302/);
    await mock.waitFor(/POST \/oauth\/token → 200/);
  });
});

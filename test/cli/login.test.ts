/** `postsched login` as a child process, against the fake service on 127.0.0.1 (automatic consent here). */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PostSched, type TokenSet } from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { freePort, type Running, startCli, stopAll } from '../support/processes.js';

const APP = { clientId: 'client_cli', clientSecret: 'secret_cli_login' };
const STACK = /^\s+at /m;

describe('postsched login', () => {
  let fake: FakeService;
  let dir: string;
  let redirectUri: string;
  let env: Record<string, string>;
  let login: Running | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postsched-login-'));
    redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
    fake = createFakeService({ apps: [{ ...APP, redirectUris: [redirectUri] }] });
    const { url } = await fake.listen();
    env = { POSTSCHED_BASE_URL: url, POSTSCHED_CLIENT_ID: APP.clientId, POSTSCHED_CLIENT_SECRET: APP.clientSecret };
  });
  afterEach(async () => {
    await stopAll(login);
    login = undefined;
    await fake?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** What the browser does: opens the printed URL and follows the service's redirect to the callback. */
  async function browse(running: Running): Promise<Response> {
    const [url] = await running.waitFor(/http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+/);
    const answer = await fetch(url, { redirect: 'manual' });
    return fetch(answer.headers.get('location') ?? '');
  }

  it('prints the URL to open, receives the redirect, and saves a working TokenSet in a file of mode 0600', async () => {
    const out = join(dir, 'tokens.json');
    login = startCli(['login', '--scopes', 'accounts:read,posts:read', '--redirect-uri', redirectUri, '--out', out], env);
    const page = await browse(login);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('You can close this tab.');
    expect(await login.exited).toBe(0);
    expect(login.stdout()).toContain(`Saved the TokenSet to ${out} (mode 600)`);
    expect(login.stdout()).toContain('Signed in. Scopes: accounts:read posts:read.');

    expect((await stat(out)).mode & 0o777).toBe(0o600);
    const tokens = JSON.parse(await readFile(out, 'utf8')) as TokenSet;
    expect(tokens).toMatchObject({ scopes: ['accounts:read', 'posts:read'], tokenType: 'bearer' });
    expect(login.output()).not.toContain(tokens.accessToken); // never printed
    expect(login.output()).not.toContain(tokens.refreshToken);
    const client = new PostSched({ baseUrl: env.POSTSCHED_BASE_URL as string, auth: tokens.accessToken });
    expect((await client.accounts.list().toArray()).length).toBeGreaterThan(0);
    expect(fake.stats.tokenRequests.authorization_code).toBe(1);
  });

  it('ignores a callback of another sign-in (wrong state) and keeps waiting for its own', async () => {
    const out = join(dir, 'tokens.json');
    login = startCli(['login', '--redirect-uri', redirectUri, '--out', out], env);
    await login.waitFor(/Waiting for the redirect/);
    const stale = await fetch(`${redirectUri}?code=code_stale&state=not_this_one`);
    expect(stale.status).toBe(400);
    expect(await browse(login).then((r) => r.status)).toBe(200);
    expect(await login.exited).toBe(0);
  });

  it('keeps waiting when something sends the callback port a request whose target is no URL ("//")', async () => {
    const out = join(dir, 'tokens.json');
    login = startCli(['login', '--redirect-uri', redirectUri, '--out', out], env);
    await login.waitFor(/Waiting for the redirect/);
    // What fetch('http://127.0.0.1:<port>//') from any open page sends; it ended the process with a TypeError.
    const { port } = new URL(redirectUri);
    const status = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.end('GET // HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n'));
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
      socket.on('error', reject);
    });
    expect(status).toBe('HTTP/1.1 404 Not Found');
    expect(await browse(login).then((r) => r.status)).toBe(200);
    expect(await login.exited).toBe(0);
    expect(login.stderr()).toBe('');
  });

  it('exits 1 with the OAuth error when the user denies, and saves nothing', async () => {
    fake.setConsent('deny');
    const out = join(dir, 'tokens.json');
    login = startCli(['login', '--redirect-uri', redirectUri, '--out', out], env);
    expect((await browse(login)).status).toBe(400);
    expect(await login.exited).toBe(1);
    expect(login.stderr()).toMatch(/^postsched login: OAuthError: The authorization server answered with the OAuth error "access_denied": The user denied the request\.\n$/);
    await expect(stat(out)).rejects.toThrow();
  });

  it('says why it could not save the tokens: exit 1, one line', async () => {
    const out = join(dir, 'tokens.json', 'nested.json'); // under a file, not a folder
    await writeFile(join(dir, 'tokens.json'), 'a file');
    login = startCli(['login', '--redirect-uri', redirectUri, '--out', out], env);
    await browse(login);
    expect(await login.exited).toBe(1);
    expect(login.stderr()).toMatch(new RegExp(`^postsched login: could not save the tokens to ${out}: .*\n$`));
  });

  it('stops cleanly on Ctrl-C while waiting: exit 130, the callback port freed', async () => {
    login = startCli(['login', '--redirect-uri', redirectUri, '--out', join(dir, 't.json')], env);
    await login.waitFor(/Waiting for the redirect/);
    expect(await login.stop('SIGINT')).toBe(130);
    expect(login.stderr()).toBe('Sign-in cancelled.\n');
    await expect(fetch(redirectUri)).rejects.toThrow();
  });

  it('gives up after --timeout with a hint about the redirect URI: exit 1', async () => {
    login = startCli(['login', '--redirect-uri', redirectUri, '--timeout', '0.5', '--out', join(dir, 't.json')], env);
    expect(await login.exited).toBe(1);
    expect(login.stderr()).toBe(`postsched login: no redirect to ${redirectUri} within 0.5 s. Is that redirect URI registered for the app?\n`);
  });

  it.each([
    [{ POSTSCHED_CLIENT_ID: undefined }, [], /^postsched login: pass --client-id or set POSTSCHED_CLIENT_ID\n/],
    [{}, ['--scopes', 'posts:read,posts:delete'], /^postsched login: --scopes: unknown scope "posts:delete"; known: /],
    [{}, ['--redirect-uri', 'https://app.example/callback'], /^postsched login: --redirect-uri must be a loopback http URL with a port/],
    [{ POSTSCHED_BASE_URL: 'http://api.example.com' }, [], /^postsched login: .*baseUrl.*https/],
  ])('a bad setting is a usage error: exit 2, one message (%j %j)', async (override, args, message) => {
    login = startCli(['login', ...args], { ...env, ...override });
    expect(await login.exited).toBe(2);
    expect(login.stderr()).toMatch(message);
    expect(login.stderr()).not.toMatch(STACK);
  });
});

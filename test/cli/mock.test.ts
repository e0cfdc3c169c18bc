/** `postsched mock` as a child process: the settings it prints work, it logs requests and deliveries, Ctrl-C stops it. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OAuthClient, PostSched } from '@postsched/sdk';
import { verifyWebhook, type WebhookEvent } from '@postsched/sdk/webhooks';
import { type Running, runCli, startMock, stopAll } from '../support/processes.js';

/** A webhook receiver that verifies each delivery with the SDK, default options, as an app does. */
let receiver: Server;
let receiverUrl: string;
const verified: WebhookEvent[] = [];
const rejected: string[] = [];
beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        verified.push(await verifyWebhook({ body: Buffer.concat(chunks), signature: req.headers, secret: 'whsec_postsched_mock' }));
        res.writeHead(204).end();
      } catch (error) {
        rejected.push(String(error));
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
});
afterAll(() => new Promise((resolve) => receiver?.close(resolve)));

/** The SDK's OAuth client, set up from the exports `postsched mock` printed. */
function oauthFor(env: Record<string, string | undefined>): OAuthClient {
  return new OAuthClient({
    baseUrl: env.POSTSCHED_BASE_URL as string,
    clientId: env.POSTSCHED_CLIENT_ID as string,
    clientSecret: env.POSTSCHED_CLIENT_SECRET as string,
    redirectUri: env.POSTSCHED_REDIRECT_URI as string,
  });
}

describe('postsched mock', () => {
  let mock: Running | undefined;
  afterEach(() => stopAll(mock));

  it('prints export lines that an SDK client uses as they are, and one line per request', async () => {
    const started = await startMock();
    mock = started.mock;
    const { env } = started;
    expect(Object.keys(env)).toEqual([
      'POSTSCHED_BASE_URL', 'POSTSCHED_CLIENT_ID', 'POSTSCHED_CLIENT_SECRET', 'POSTSCHED_REDIRECT_URI',
      'POSTSCHED_WEBHOOK_SECRET', 'POSTSCHED_ACCESS_TOKEN', 'POSTSCHED_ACCOUNT_ID',
    ]);
    expect(env.POSTSCHED_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(mock.stdout()).toContain('(real clock, consent: prompt, profile: full)');

    const client = new PostSched({ baseUrl: env.POSTSCHED_BASE_URL as string, auth: env.POSTSCHED_ACCESS_TOKEN as string });
    const accounts = await client.accounts.list().toArray();
    expect(accounts.map((a) => a.id)).toContain(env.POSTSCHED_ACCOUNT_ID);
    await mock.waitFor(/^\d\d:\d\d:\d\d GET \/accounts(\?…)? → 200 \(\d+ ms\)$/m);

    // The client credentials and redirect URI are registered: the authorize URL shows the consent page.
    const oauth = oauthFor(env);
    const page = await fetch((await oauth.createAuthorizationUrl({ scopes: ['posts:read'] })).url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('wants to use your Post Scheduling account');
  });

  it('delivers signed webhooks to --webhook-url on the real clock, verified with default options, one line each', async () => {
    const started = await startMock(['--webhook-url', receiverUrl]);
    mock = started.mock;
    const { env } = started;
    expect(mock.stdout()).toContain(`Webhooks: ${receiverUrl}, signed with POSTSCHED_WEBHOOK_SECRET`);
    const client = new PostSched({ baseUrl: env.POSTSCHED_BASE_URL as string, auth: env.POSTSCHED_ACCESS_TOKEN as string });
    const post = await client.posts.create({ account_ids: ['acc_demo_x'], publish_at: new Date(Date.now() + 500) });
    await mock.waitFor(new RegExp(`webhook post\\.scheduled → ${receiverUrl}: 204 \\(\\d+ ms\\)`));
    await mock.waitFor(new RegExp(`webhook post\\.published → ${receiverUrl}: 204 \\(\\d+ ms\\)`));
    expect(rejected).toEqual([]);
    expect(verified.filter((e) => e.data.id === post.id).map((e) => e.event)).toEqual(['post.scheduled', 'post.published']);
  });

  it('says its state is in memory; --token-ttl 60s issues access tokens that expire in 60 s, to watch a refresh', async () => {
    const started = await startMock(['--token-ttl', '60s', '--consent', 'approve']);
    mock = started.mock;
    const { env } = started;
    expect(mock.stdout()).toContain('The access token has every scope and expires in 60 s');
    expect(mock.stdout()).toContain('State is in memory: a restart forgets every token');
    const oauth = oauthFor(env);
    const pending = await oauth.createAuthorizationUrl({ scopes: ['posts:read'] });
    const code = new URL((await fetch(pending.url, { redirect: 'manual' })).headers.get('location') ?? '').searchParams.get('code') ?? '';
    const answer = await fetch(`${env.POSTSCHED_BASE_URL}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code', code, redirect_uri: env.POSTSCHED_REDIRECT_URI as string, code_verifier: pending.codeVerifier,
        client_id: env.POSTSCHED_CLIENT_ID as string, client_secret: env.POSTSCHED_CLIENT_SECRET as string,
      }),
    });
    expect(((await answer.json()) as { expires_in: number }).expires_in).toBe(60);
  });

  it('--refresh-policy static keeps the refresh token; an unknown policy is refused, naming the ones it takes', async () => {
    const started = await startMock(['--refresh-policy', 'static', '--consent', 'approve']);
    mock = started.mock;
    const { env } = started;
    const oauth = oauthFor(env);
    const pending = await oauth.createAuthorizationUrl({ scopes: ['posts:read'] });
    const allowed = await fetch(pending.url, { redirect: 'manual' });
    const tokens = await oauth.exchangeCode(allowed.headers.get('location') ?? '', pending);
    expect((await oauth.refresh(tokens)).refreshToken).toBe(tokens.refreshToken);
    expect((await oauth.refresh(tokens)).refreshToken).toBe(tokens.refreshToken);
    const { code, stderr } = await runCli(['mock', '--port', '0', '--refresh-policy', 'rolling']);
    expect(code).not.toBe(0);
    expect(stderr).toContain('--refresh-policy must be one of rotate, reuse-detection, static, retain-until-used; got "rolling"');
  });

  it('refuses a --token-ttl that is not a time, saying which forms it takes', async () => {
    const { code, stderr } = await runCli(['mock', '--port', '0', '--token-ttl', '60 seconds']);
    expect(code).not.toBe(0);
    expect(stderr).toContain('--token-ttl must be a time from 1s to 720h, such as 60s, 5m or 1h; got "60 seconds"');
  });

  it('stops cleanly on Ctrl-C: exit 0, the port closed', async () => {
    const started = await startMock();
    mock = started.mock;
    const code = await mock.stop('SIGINT');
    expect(code).toBe(0);
    expect(mock.stdout()).toMatch(/postsched mock: stopped\n$/);
    await expect(fetch(`${started.env.POSTSCHED_BASE_URL}/accounts`)).rejects.toThrow();
  });

  it('says what to do when the port is taken: exit 1, no stack trace', async () => {
    const started = await startMock();
    mock = started.mock;
    const port = new URL(started.env.POSTSCHED_BASE_URL as string).port;
    const { code, stderr } = await runCli(['mock', '--port', port]);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `postsched mock: port ${port} of 127.0.0.1 is in use (another postsched mock?): stop it, or pass --port <n> (0 picks a free one)\n`,
    );
  });

  it('--profile minimal answers only what the spec gives; --consent approve redirects at once (for scripts)', async () => {
    const started = await startMock(['--profile', 'minimal', '--consent', 'approve']);
    mock = started.mock;
    expect(mock.stdout()).toContain('consent: approve, profile: minimal');
    const raw = await fetch(`${started.env.POSTSCHED_BASE_URL}/accounts`, { headers: { authorization: `Bearer ${started.env.POSTSCHED_ACCESS_TOKEN}` } });
    const page = (await raw.json()) as { data: Record<string, unknown>[] };
    expect(page.data.map((account) => Object.keys(account))).toEqual([['id'], ['id']]);
    const oauth = oauthFor(started.env);
    const pending = await oauth.createAuthorizationUrl({ scopes: ['posts:read'] });
    const answer = await fetch(pending.url, { redirect: 'manual' });
    expect(answer.status).toBe(302);
    expect((await oauth.exchangeCode(answer.headers.get('location') ?? '', pending)).scopes).toEqual(['posts:read']);
  });
});

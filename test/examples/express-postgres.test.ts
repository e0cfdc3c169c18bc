/**
 * examples/express-postgres.ts against the fake service and a real PostgreSQL server (both on 127.0.0.1): a user
 * connects (tokens encrypted in the table), the accounts page refreshes through the table, a forged or lost-session
 * callback is a page and the server stays up, and a webhook is handled once however often it is delivered (the
 * dedupe in PostgreSQL), a forged one refused.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { signWebhook } from '@postsched/sdk/webhooks';
import { answerConsentPage } from '../support/consent.js';
import { FAKE_PROFILE, FAKE_PROFILE_OPTIONS, FAKE_SEED } from '../support/fake-profile.js';
import { freePort, start, startMock, stopAll } from '../support/processes.js';
import { configFromEnv, createApp } from '../../examples/express-postgres.js';
import { type PostgresServer, startPostgresServer } from '../postgres/postgres-server.js';

const WEBHOOK_SECRET = 'whsec_example_pg';
const ENCRYPTION_KEY = Buffer.alloc(32, 5).toString('base64');

let postgres: PostgresServer;
let pool: pg.Pool;
let fake: FakeService;
let server: Server;
let appUrl: string;

beforeAll(async () => {
  postgres = await startPostgresServer();
  pool = new pg.Pool({ connectionString: postgres.url });
  pool.on('error', () => {});
  fake = createFakeService({ ...FAKE_PROFILE_OPTIONS, accounts: [{ id: 'acc_1', platform: 'x', name: 'Acme on X' }] });
  const { url: serviceUrl } = await fake.listen();
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const registered = fake.registerApp({ redirectUris: [`${appUrl}/callback`] });
  const config = configFromEnv({
    POSTSCHED_BASE_URL: serviceUrl,
    POSTSCHED_CLIENT_ID: registered.clientId,
    POSTSCHED_CLIENT_SECRET: registered.clientSecret,
    POSTSCHED_REDIRECT_URI: `${appUrl}/callback`,
    DATABASE_URL: postgres.url,
    TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
    POSTSCHED_WEBHOOK_SECRET: WEBHOOK_SECRET,
  });
  server.on('request', await createApp(config, pool));
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await fake?.close();
  await pool?.end();
  await postgres?.stop();
});

/** A browser as far as this flow needs one: the session cookie, redirects followed by hand. */
async function visit(path: string, jar: Map<string, string>): Promise<{ status: number; html: string; urls: string[] }> {
  const urls = [new URL(path, appUrl).href];
  for (;;) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(urls.at(-1)!, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } });
    for (const header of response.headers.getSetCookie()) {
      const [name = '', value = ''] = header.split(';')[0]!.split('=');
      jar.set(name, value);
    }
    const location = response.headers.get('location');
    if (location === null || urls.length > 10) return { status: response.status, html: await response.text(), urls };
    await response.body?.cancel();
    urls.push(new URL(location, urls.at(-1)).href);
  }
}

describe('examples/express-postgres.ts against the fake service and PostgreSQL', () => {
  it('connects a user, keeps their tokens encrypted in the table, and lists the accounts after a refresh', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    const jar = new Map<string, string>();
    const before = jar.get('sid');
    const { status, html, urls } = await visit('/login', jar);
    expect(urls.at(-1)).toBe(`${appUrl}/accounts`);
    expect(status).toBe(200);
    expect(html).toMatch(/<li>(Acme on X|acc_1)<\/li>/);
    expect(jar.get('sid')).not.toBe(before);

    const { rows } = await pool.query('SELECT key, tokens FROM postsched_tokens');
    expect(rows).toHaveLength(1);
    expect(rows[0].tokens).not.toMatch(/refresh|access|Token/i); // an AES-256-GCM envelope, not the TokenSet's JSON

    await fake.clock.advance(2 * 3_600_000); // the access token expired at the service
    const again = await visit('/accounts', jar);
    expect(again.status).toBe(200);
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);
  });

  it('answers a forged or lost-session callback with a page, and keeps serving', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const lost = await visit('/callback?code=abc&state=forged', new Map());
    expect(lost.status).toBe(400);
    expect(lost.html).toContain('This sign-in has expired');

    const jar = new Map<string, string>();
    const login = await fetch(`${appUrl}/login`, { redirect: 'manual' }); // a sign-in started in this session
    const [name = '', value = ''] = login.headers.getSetCookie()[0]!.split(';')[0]!.split('=');
    jar.set(name, value);
    const forged = await visit('/callback?code=abc&state=forged', jar);
    expect(forged.status).toBe(400);
    expect(forged.html).toContain('This sign-in could not be completed');
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^Sign-in refused: /));
    expect((await visit('/', new Map())).status).toBe(200); // still up
  });

  it('handles a webhook once however often it is delivered, and refuses a forged one', async () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    const body = JSON.stringify({ event: 'post.published', created_at: new Date().toISOString(), data: { id: 'post_9', account_ids: ['acc_1'], published_at: new Date().toISOString() } });
    const deliver = async (secret: string) =>
      (await fetch(`${appUrl}/webhooks/postsched`, { method: 'POST', body, headers: { 'x-service-signature': await signWebhook({ body, secret }) } })).status;
    expect(await deliver(WEBHOOK_SECRET)).toBe(204);
    expect(await deliver(WEBHOOK_SECRET)).toBe(204); // a retry: not run again
    expect(await deliver('whsec_forged')).toBe(400);
    expect(info.mock.calls.filter(([line]) => line === 'post post_9 published')).toHaveLength(1);
    expect(Number((await pool.query('SELECT count(*) AS n FROM postsched_webhook_events WHERE claim_id IS NULL')).rows[0].n)).toBeGreaterThan(0);
  });
});

describe('examples/express-postgres.ts as copied: its own process, against postsched mock and PostgreSQL', () => {
  it('starts on 127.0.0.1, connects a user through the consent page, lists the accounts and takes a webhook', { timeout: 90_000 }, async () => {
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const { mock, env } = await startMock(['--redirect-uri', redirectUri, '--profile', FAKE_PROFILE, '--seed', String(FAKE_SEED)]);
    const app = start(new URL('../../examples/express-postgres.ts', import.meta.url).pathname, [], {
      ...env,
      PORT: String(port),
      POSTSCHED_REDIRECT_URI: redirectUri,
      DATABASE_URL: postgres.url,
      TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
      POSTSCHED_WEBHOOK_SECRET: WEBHOOK_SECRET,
    });
    try {
      await app.waitFor(new RegExp(`^Open http://127\\.0\\.0\\.1:${port}/$`, 'm'));
      const base = `http://127.0.0.1:${port}`;
      const login = await fetch(`${base}/login`, { redirect: 'manual' });
      const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
      const callback = await answerConsentPage(login.headers.get('location')!);
      const connected = await fetch(callback, { redirect: 'manual', headers: { cookie } });
      expect(connected.headers.get('location')).toBe('/accounts');
      const signedIn = connected.headers.getSetCookie()[0]!.split(';')[0]!;
      const accounts = await fetch(`${base}/accounts`, { headers: { cookie: signedIn } });
      expect(accounts.status).toBe(200);
      expect(await accounts.text()).toMatch(/<ul><li>.+<\/li>/);

      const body = JSON.stringify({ event: 'post.failed', created_at: new Date().toISOString(), data: { id: 'post_p', account_ids: ['acc_1'] } });
      const deliver = async () =>
        (await fetch(`${base}/webhooks/postsched`, { method: 'POST', body, headers: { 'x-service-signature': await signWebhook({ body, secret: WEBHOOK_SECRET }) } })).status;
      expect([await deliver(), await deliver()]).toEqual([204, 204]);
      expect(app.stdout().match(/post post_p failed/g)).toHaveLength(1);
    } finally {
      await stopAll(app, mock);
    }
  });
});

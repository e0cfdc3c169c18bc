/**
 * Every example as copied: `postsched mock` in one process, the example in another (`tsx examples/<file>`), with
 * nothing but the mock's export lines (and, where the example's port must be free, PORT and the redirect URI
 * registered for it). The mock answers in this vitest project's wire profile (`--profile`): what an example
 * prints of a field the spec does not give is checked under `full` only. The Redis example is run the same way in
 * test/redis/example-multi-process.test.ts; create-post-once.ts gets a PostgreSQL server of its own (DATABASE_URL).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.js';
import { FAKE_PROFILE, FAKE_SEED, FULL } from '../support/fake-profile.js';
import { answerConsentPage } from '../support/consent.js';
import { freePort, type Running, start, startCli, startMock, stopAll } from '../support/processes.js';
import { startPostgresServer } from '../postgres/postgres-server.js';

const example = (file: string) => fileURLToPath(new URL(`../../examples/${file}`, import.meta.url));

describe('the examples against postsched mock, each in its own process', () => {
  let mock: Running | undefined;
  let env: Record<string, string>;
  let redirectUri: string; // a free port for the examples that serve the OAuth callback
  let loginRedirect: string; // and one for postsched login
  let port: number;
  let dir: string;
  const running: Running[] = [];
  beforeAll(async () => {
    port = await freePort();
    redirectUri = `http://127.0.0.1:${port}/callback`;
    loginRedirect = `http://127.0.0.1:${await freePort()}/callback`;
    ({ mock, env } = await startMock([
      '--redirect-uri', redirectUri, '--redirect-uri', loginRedirect, '--profile', FAKE_PROFILE, '--seed', String(FAKE_SEED),
    ]));
    dir = await mkdtemp(join(tmpdir(), 'postsched-examples-'));
  });
  afterEach(async () => {
    await stopAll(...running.splice(0));
  });
  afterAll(async () => {
    await stopAll(mock);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  const run = (file: string, extra: Record<string, string> = {}, input?: 'pipe') => {
    const child = start(example(file), [], { ...env, ...extra }, input);
    running.push(child);
    return child;
  };

  it('schedule-post.ts uploads, schedules, lists and cancels a post: exit 0', async () => {
    const child = run('schedule-post.ts');
    expect(await child.exited, child.output()).toBe(0);
    expect(child.stdout()).toMatch(/Uploaded pixel\.png as media_\S+/);
    const [, postId] = /Scheduled (post_\S+) for /.exec(child.stdout()) ?? [];
    expect(child.stdout()).toContain(`Cancelled ${postId} (status `);
    if (FULL) expect(child.stdout()).toContain(`Cancelled ${postId} (status deleted)`);
  });

  it('opentelemetry.ts prints one span per call, named by its route template: exit 0', async () => {
    const child = run('opentelemetry.ts');
    expect(await child.exited, child.output()).toBe(0);
    expect(child.stdout()).toContain("name: 'GET /accounts'");
    expect(child.stdout()).toContain("name: 'GET /posts/{id}'");
    expect(child.stdout()).toContain("'url.template': '/posts/{id}'");
    expect(child.stdout()).toContain("'http.response.status_code': 404");
  });

  it('create-post-once.ts plans its row in PostgreSQL, then schedules the post and stores its id: exit 0, twice', async () => {
    const postgres = await startPostgresServer();
    try {
      for (let n = 1; n <= 2; n++) {
        const child = run('create-post-once.ts', { DATABASE_URL: postgres.url });
        expect(await child.exited, child.output()).toBe(0);
        expect(child.stdout()).toMatch(/^Scheduled \S+ \(row [0-9a-f-]{36}\)\.\n$/);
      }
      const db = new pg.Client({ connectionString: postgres.url });
      await db.connect();
      const { rows } = await db.query<{ post_id: string | null }>('SELECT post_id FROM planned_posts');
      await db.end();
      expect(rows).toHaveLength(2);
      expect(rows.every((row) => row.post_id !== null)).toBe(true);
    } finally {
      await postgres.stop();
    }
  });

  it('demo.ts runs the OAuth flow by hand (URL printed, callback pasted), schedules and cancels a post: exit 0', async () => {
    const child = run('demo.ts', {}, 'pipe');
    const [authorizeUrl] = await child.waitFor(/http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+/);
    await child.waitFor(/callback URL: $/);
    child.child.stdin?.end(`${await answerConsentPage(authorizeUrl)}\n`);
    expect(await child.exited, child.output()).toBe(0);
    expect(child.stdout()).toMatch(/post_\S+ cancelled, status: .*\n\nDone\.\n$/);
    if (FULL) expect(child.stdout()).toMatch(/post_\S+ cancelled, status: deleted\n/);
  });

  it('file-token-store.ts lists the accounts of the user that postsched login saved', async () => {
    const tokenFile = join(dir, '.postsched', 'tokens.json'); // its folder does not exist yet
    const login = startCli(['login', '--out', tokenFile, '--redirect-uri', loginRedirect], env);
    running.push(login);
    const [authorizeUrl] = await login.waitFor(/http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+/);
    await fetch(await answerConsentPage(authorizeUrl));
    expect(await login.exited, login.output()).toBe(0);

    const child = run('file-token-store.ts', { POSTSCHED_TOKEN_FILE: tokenFile });
    expect(await child.exited, child.output()).toBe(0);
    expect(child.stdout()).toMatch(/^.+ \(acc_demo_x\)\n.+ \(acc_demo_linkedin\)\n$/);
    if (FULL) expect(child.stdout()).toBe('x          Demo on X (acc_demo_x)\nlinkedin   Demo on LinkedIn (acc_demo_linkedin)\n');
  });

  it('oauth-express.ts: a person opens the app in Chromium, connects, clicks Allow and sees the accounts', async () => {
    const child = run('oauth-express.ts', { PORT: String(port), POSTSCHED_REDIRECT_URI: redirectUri });
    const [, appUrl] = await child.waitFor(/^Open (http:\/\/127\.0\.0\.1:\d+\/)$/m);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(appUrl as string);
      await page.getByText('Connect your PostSched account').click();
      await page.locator('#allow').click();
      await page.waitForURL(`${appUrl}accounts`);
      expect(await page.locator('h1').innerText()).toBe('Your accounts');
      const items = await page.locator('li').allInnerTexts();
      expect(items).toHaveLength(2);
      if (FULL) expect(items).toEqual(['Demo on X (x)', 'Demo on LinkedIn (linkedin)']);
    } finally {
      await browser.close();
    }
  }, 90_000);
});

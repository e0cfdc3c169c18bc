/**
 * The newcomer's path through the README, as pasted into a fresh project: `npm init -y` (CommonJS), the Install
 * section's `"type": "module"` line, the SDK as `npm pack` packs it (not the sources: no tsconfig paths), Express 5
 * and node-postgres, run by `npx tsx`. Usage runs against `postsched mock`; "Connect a user" (PostgreSQL) and
 * "Webhooks" run as one app, their blocks verbatim, with only the names the README says are the reader's own
 * (`app`, `req.session`, `currentUserId`, `notifyUser`, `queue`, `db`) defined around them: a user connects through
 * the consent page, their posts are listed, a forged and a lost-session callback leave the server up, and a webhook
 * delivered twice is handled once through PostgreSQL.
 */
import { execFile as execFileCb } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '@postsched/sdk/webhooks';
import { answerConsentPage } from './support/consent.js';
import { installPackedSdk } from './support/packed-sdk.js';
import { freePort, ROOT, start, startMock, stopAll } from './support/processes.js';
import { type PostgresServer, startPostgresServer } from './postgres/postgres-server.js';

const execFile = promisify(execFileCb);
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const section = (title: string) => README.split(/^(?=## )/m).find((part) => part.startsWith(`## ${title}\n`)) ?? '';
/** The first top-level TypeScript block of a README section (an indented one belongs to a list item). */
const firstBlock = (title: string) => /^```ts\n([\s\S]*?)^```/m.exec(section(title))?.[1] ?? '';

const work = join(ROOT, '.tmp', `newcomer-${process.pid}`);
const project = join(work, 'app');
let postgres: PostgresServer;

/** What the README leaves to the reader, as the least an app would write: a cookie session in memory. */
const BEFORE = `
import { randomUUID } from 'node:crypto';
import express from 'express';

const app = express();
const sessions = new Map<string, Record<string, unknown>>();
app.use((req, res, next) => {
  let sid = /(?:^|;\\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
  if (sid === undefined || !sessions.has(sid)) {
    sessions.set((sid = randomUUID()), {});
    res.setHeader('set-cookie', \`sid=\${sid}; Path=/; HttpOnly\`);
  }
  (req as unknown as { session: unknown }).session = sessions.get(sid);
  next();
});
const currentUserId = (_req: unknown) => 'user_1';
const notifyUser = (userId: string) => console.log(\`notify \${userId}\`);
const queue = { add: async (name: string, data: unknown) => console.log(\`queued \${name} \${JSON.stringify(data)}\`) };
const db = { posts: { setStatus: async (id: string, status: string) => console.log(\`status \${id} \${status}\`) } };
`;
const AFTER = `
app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(\`listening on \${process.env.PORT}\`));
`;

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(project, { recursive: true });
  await execFile('npm', ['init', '-y'], { cwd: project });
  // Install: the one package.json line the README gives for ESM.
  const line = /```json\n(.*)\n```/.exec(section('Install'))?.[1] ?? '';
  const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(project, 'package.json'), JSON.stringify({ ...pkg, ...(JSON.parse(`{${line}}`) as object) }, null, 2));
  writeFileSync(join(project, 'tsconfig.json'), '{}\n'); // a project of its own: tsx reads no tsconfig of the repository
  await installPackedSdk(work, project);
  postgres = await startPostgresServer();
}, 240_000);
afterAll(async () => {
  await postgres?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('the README pasted into a fresh ESM project (npm init -y, the Install line, the packed SDK)', () => {
  it('Usage runs against postsched mock', { timeout: 60_000 }, async () => {
    writeFileSync(join(project, 'usage.ts'), firstBlock('Usage'));
    const { mock, env } = await startMock();
    try {
      const run = start('usage.ts', [], env, undefined, project);
      expect(await run.exited, run.output()).toBe(0);
      expect(run.stdout()).toMatch(/post_\S+ is scheduled/);
    } finally {
      await stopAll(mock);
    }
  });

  it('Connect a user (PostgreSQL) and Webhooks run as one Express 5 app', { timeout: 90_000 }, async () => {
    const [connect, webhooks] = [firstBlock('Connect a user'), firstBlock('Webhooks')];
    expect(connect).toContain('PostgresTokenStore');
    expect(webhooks).toContain('createWebhookHandler');
    writeFileSync(join(project, 'app.ts'), [BEFORE, connect, webhooks, AFTER].join('\n'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const { mock, env } = await startMock(['--redirect-uri', `${base}/callback`]);
    const secret = 'whsec_newcomer';
    const app = start('app.ts', [], { ...env, PORT: String(port), POSTSCHED_REDIRECT_URI: `${base}/callback`, DATABASE_URL: postgres.url, TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'), POSTSCHED_WEBHOOK_SECRET: secret }, undefined, project);
    try {
      await app.waitFor(/^listening on \d+$/m);
      const login = await fetch(`${base}/login`, { redirect: 'manual' });
      const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
      const callback = await answerConsentPage(login.headers.get('location')!);
      const connected = await fetch(callback, { redirect: 'manual', headers: { cookie } });
      expect(connected.headers.get('location'), app.output()).toBe('/posts');
      const posts = await fetch(`${base}/posts`, { headers: { cookie } });
      expect(posts.status, app.output()).toBe(200);
      expect(Array.isArray(await posts.json())).toBe(true);

      // A forged callback is the 400 page; a lost session (no cookie) reaches Express 5's error handler: neither ends the process.
      expect((await fetch(`${base}/callback?code=x&state=forged`, { headers: { cookie } })).status).toBe(400);
      expect((await fetch(callback, { redirect: 'manual' })).status).toBe(500);
      expect((await fetch(`${base}/posts`, { headers: { cookie } })).status).toBe(200);

      const body = JSON.stringify({ event: 'post.published', created_at: new Date().toISOString(), data: { id: 'post_n', account_ids: ['acc_1'], published_at: new Date().toISOString() } });
      const deliver = async () => (await fetch(`${base}/webhooks/postsched`, { method: 'POST', body, headers: { 'x-service-signature': await signWebhook({ body, secret }) } })).status;
      expect([await deliver(), await deliver()]).toEqual([204, 204]);
      expect(app.stdout().match(/queued published \{"id":"post_n"/g), app.output()).toHaveLength(1);
    } finally {
      await stopAll(app, mock);
    }
  });
});

/**
 * A multi-user Express 5 app whose only store is PostgreSQL: users connect their PostSched account (OAuth 2.0 with
 * PKCE), their tokens are kept encrypted in a table (`PostgresTokenStore`, one `UserClients` for every user, one
 * refresh per user across every process), and webhooks are handled once across the fleet (`PostgresWebhookDedupe`).
 *
 *   npm install @postsched/sdk express pg && npm install -D tsx @types/express @types/pg   # tsx runs the TypeScript file
 *
 * Against the local mock of the service (in a clone of this repository, `npm run mock` instead of `npx postsched mock`)
 * and a local PostgreSQL (`sudo apt-get install postgresql`, or `brew install postgresql`):
 *   npx postsched mock                                        # terminal 1: paste its export lines into terminal 2
 *   export DATABASE_URL=postgres://localhost/postgres          # terminal 2
 *   export TOKEN_ENCRYPTION_KEY="$(openssl rand -base64 32)"   # keep it: tokens stored under it need it to be read
 *   export POSTSCHED_WEBHOOK_SECRET=whsec_local_test           # the endpoint's signing secret, from the dashboard
 *   npx tsx examples/express-postgres.ts
 * then open http://127.0.0.1:3000 and connect. Webhooks: POST http://127.0.0.1:3000/webhooks/postsched.
 *
 * Against a real service, set POSTSCHED_BASE_URL, POSTSCHED_CLIENT_ID, POSTSCHED_CLIENT_SECRET and
 * POSTSCHED_REDIRECT_URI (default http://127.0.0.1:3000/callback) yourself, and PORT (3000) if you like. The redirect
 * URI must be registered for the app, character for character, and you open the app on that host: 127.0.0.1 and
 * localhost keep separate cookies, so a callback on the other one finds no sign-in.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import express from 'express';
import pg from 'pg';
import { OAuthCallbackError, OAuthClient, OAuthError, ReauthorizationRequiredError, UserClients, type Scope } from '@postsched/sdk';
import { createTokenTable, createWebhookDedupeTable, PostgresTokenStore, PostgresWebhookDedupe } from '@postsched/sdk/postgres';
import { createWebhookHandler } from '@postsched/sdk/webhooks';

const SCOPES: Scope[] = ['accounts:read', 'posts:read', 'posts:write'];
/** How long a started sign-in may take before its callback is refused. */
const LOGIN_TTL_MS = 10 * 60_000;

/** What the app needs, from environment variables. */
export interface Config {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  port: number;
  databaseUrl: string;
  encryptionKey: string;
  webhookSecret: string;
}

export function configFromEnv(env: Record<string, string | undefined> = process.env): Config {
  const need = (name: string, how = 'see the top of examples/express-postgres.ts'): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`Set ${name} (${how}).`);
    return value;
  };
  const port = Number(env.PORT ?? 3000);
  return {
    baseUrl: need('POSTSCHED_BASE_URL'),
    clientId: need('POSTSCHED_CLIENT_ID'),
    clientSecret: need('POSTSCHED_CLIENT_SECRET'),
    redirectUri: env.POSTSCHED_REDIRECT_URI ?? `http://127.0.0.1:${port}/callback`,
    port,
    databaseUrl: need('DATABASE_URL'),
    encryptionKey: need('TOKEN_ENCRYPTION_KEY', 'make one with `openssl rand -base64 32` and keep it'),
    webhookSecret: need('POSTSCHED_WEBHOOK_SECRET'),
  };
}

/** A sign-in in progress (secrets: kept on the server) and the signed-in user, by session cookie. */
interface Session {
  userId?: string;
  pendingLogin?: { state: string; codeVerifier: string; scopes: Scope[]; startedAt: number };
}

/**
 * The app, its tables made (safe from every process at once). In memory: sessions only (use express-session with a
 * PostgreSQL store in production).
 */
export async function createApp(config: Config, pool: pg.Pool): Promise<express.Express> {
  await createTokenTable(pool);
  await createWebhookDedupeTable(pool);
  const { baseUrl, clientId, clientSecret, redirectUri } = config;
  const oauth = new OAuthClient({ baseUrl, clientId, clientSecret, redirectUri });
  const users = new UserClients({
    oauth,
    baseUrl,
    store: (userId) => new PostgresTokenStore({ pool, key: userId, encryptionKey: config.encryptionKey }),
    onReauthorizationRequired: (userId, error) => console.warn(`User ${userId} must connect again (${error.reason})`),
  });
  const webhooks = createWebhookHandler({
    secret: config.webhookSecret,
    dedupe: new PostgresWebhookDedupe({ pool }), // each event handled once, whichever process gets it
    on: {
      // Enqueue and return in a real app; `stale`: a later event of this post was handled already.
      'post.published': (event, { stale }) => console.info(`post ${event.data.id} published${stale ? ' (late, skipped)' : ''}`),
      'post.failed': (event) => console.info(`post ${event.data.id} failed`),
    },
  });

  const sessions = new Map<string, Session>();
  const cookieOf = (req: express.Request) => /(?:^|;\s*)sid=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1];
  /** The session under a new id (its cookie set): at the first request, and after sign-in (an id planted before is worthless). */
  const startSession = (res: express.Response, session: Session = {}): Session => {
    const id = randomBytes(32).toString('base64url');
    sessions.set(id, session);
    res.cookie('sid', id, { httpOnly: true, sameSite: 'lax', secure: redirectUri.startsWith('https:'), path: '/' });
    return session;
  };
  const sessionOf = (req: express.Request, res: express.Response): Session => sessions.get(cookieOf(req) ?? '') ?? startSession(res);

  const app = express();
  app.disable('x-powered-by');
  // Before any body parser: the signature covers the raw bytes. `all`: other methods are answered 405 by the handler.
  app.all('/webhooks/postsched', webhooks.node);

  app.get('/', (req, res) => {
    if (sessionOf(req, res).userId !== undefined) return res.redirect('/accounts');
    page(res, 200, 'Welcome', '<p><a href="/login">Connect your PostSched account</a></p>');
  });

  app.get('/login', async (req, res) => {
    const session = sessionOf(req, res);
    const { url, state, codeVerifier, scopes } = await oauth.createAuthorizationUrl({ scopes: SCOPES });
    session.pendingLogin = { state, codeVerifier, scopes, startedAt: Date.now() };
    res.redirect(url);
  });

  app.get('/callback', async (req, res) => {
    const session = sessionOf(req, res);
    const pending = session.pendingLogin;
    delete session.pendingLogin; // one callback per sign-in: a replay finds nothing
    if (pending === undefined || Date.now() - pending.startedAt > LOGIN_TTL_MS) {
      // No sign-in in this session: it expired, or the browser did not send the cookie (another host, a new browser).
      return page(res, 400, 'This sign-in has expired', '<p>Please <a href="/login">start again</a>.</p>');
    }
    try {
      const tokens = await oauth.exchangeCode(req.originalUrl, pending);
      session.userId ??= randomUUID(); // your app's signed-in user
      await users.connect(session.userId, tokens); // encrypted into the user's row
      sessions.delete(cookieOf(req) ?? '');
      startSession(res, session);
      res.redirect('/accounts');
    } catch (error) {
      // A forged or replayed callback, or a refused code: a page, never a crash.
      if (error instanceof OAuthCallbackError || error instanceof OAuthError) {
        console.warn(`Sign-in refused: ${error instanceof OAuthCallbackError ? error.code : error.error}`);
        return page(res, 400, 'This sign-in could not be completed', '<p>Please <a href="/login">start again</a>.</p>');
      }
      throw error; // to the error handler below
    }
  });

  app.get('/accounts', async (req, res) => {
    const { userId } = sessionOf(req, res);
    if (userId === undefined) return res.redirect('/login');
    try {
      const accounts = await users.client(userId).accounts.list().toArray(); // refreshes the token when needed
      const items = accounts.map((a) => `<li>${escapeHtml(typeof a.name === 'string' ? a.name : a.id)}</li>`).join('');
      page(res, 200, 'Your accounts', `<ul>${items}</ul>`);
    } catch (error) {
      if (error instanceof ReauthorizationRequiredError) {
        return page(res, 401, 'Your PostSched connection has expired', '<p><a href="/login">Connect again</a>.</p>');
      }
      throw error;
    }
  });

  // Express 5 hands every error of an async route here (Express 4 would not: an unhandled rejection).
  app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    console.error(error); // SDK errors carry no token
    page(res, 500, 'Something went wrong', '<p>Please try again later.</p>');
  });
  return app;
}

function page(res: express.Response, status: number, title: string, body: string): void {
  res.status(status).type('html').set('cache-control', 'no-store').send(`<!doctype html><title>${escapeHtml(title)}</title><h1>${escapeHtml(title)}</h1>${body}`);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// Listen only when run directly (not when imported by a test).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const config = configFromEnv();
  const pool = new pg.Pool({ connectionString: config.databaseUrl });
  pool.on('error', (error) => console.error('PostgreSQL connection lost:', error.message)); // else a restart kills the process
  void createApp(config, pool).then((app) => app.listen(config.port, '127.0.0.1', () => console.log(`Open http://127.0.0.1:${config.port}/`)));
}

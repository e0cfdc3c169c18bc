/**
 * "Connect your PostSched account" in an Express app: OAuth 2.0 with PKCE, token storage, and an API call.
 *
 * Shows: /login builds the authorization URL and keeps `state` and the PKCE `codeVerifier` in the user's
 * session (server side: they never reach the browser); /callback checks the answer, exchanges the code and
 * connects the user (`UserClients.connect`: the TokenSet goes into the user's TokenStore); /accounts lists the
 * user's accounts with `users.client(userId)`, a PostSched that refreshes the access token on its own. One
 * `UserClients` serves every user, keeping at most `maxUsers` of them cached. Each failure a user can cause gets a
 * page that says what to do.
 *
 *   npm install @postsched/sdk express && npm install -D tsx @types/express   # tsx runs the TypeScript file
 *
 * Against the local mock of the service (in a clone of this repository, `npm run mock` instead of `npx postsched mock`):
 *   npx postsched mock                    # terminal 1: paste its export lines into terminal 2
 *   npx tsx examples/oauth-express.ts     # terminal 2
 * then open http://127.0.0.1:3000 and connect: the mock shows a consent page, Allow lands on your accounts.
 *
 * Against a real service, set POSTSCHED_BASE_URL, POSTSCHED_CLIENT_ID, POSTSCHED_CLIENT_SECRET and
 * POSTSCHED_REDIRECT_URI (default http://127.0.0.1:3000/callback) yourself, and PORT (3000) if you like. The
 * redirect URI must be registered for the app, character for character, and you open the app on the same host
 * (127.0.0.1 and localhost keep separate cookies).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import express from 'express';
import {
  OAuthCallbackError,
  OAuthClient,
  OAuthError,
  PermissionDeniedError,
  ReauthorizationRequiredError,
  UserClients,
  type Account,
  type Scope,
  type TokenSet,
  type TokenStore,
} from '@postsched/sdk';

/** What the app asks the user to grant. Ask for what you use; a missing one is a 403 naming it. */
const SCOPES: Scope[] = ['accounts:read', 'posts:read', 'posts:write', 'media:write'];
/** How long a started login may take before its callback is refused. */
const LOGIN_TTL_MS = 10 * 60_000;
const SESSION_COOKIE = 'sid';

/** What the app needs, from environment variables. */
export interface Config {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  port: number;
}

export function configFromEnv(env: Record<string, string | undefined> = process.env): Config {
  const need = (name: string): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`Set ${name} (see the top of examples/oauth-express.ts).`);
    return value;
  };
  const port = Number(env.PORT ?? 3000);
  return {
    baseUrl: need('POSTSCHED_BASE_URL'),
    clientId: need('POSTSCHED_CLIENT_ID'),
    clientSecret: need('POSTSCHED_CLIENT_SECRET'),
    redirectUri: env.POSTSCHED_REDIRECT_URI ?? `http://127.0.0.1:${port}/callback`,
    port,
  };
}

export interface AppOptions {
  /**
   * Where each user's tokens live. Default: memory, one process (lost on restart). Use a `FileTokenStore`
   * (examples/file-token-store.ts) for one process, `RedisTokenStore` ('@postsched/sdk/redis') for several.
   */
  tokenStoreFor?: (userId: string) => TokenStore;
}

/** What the session keeps between /login and /callback, and after. */
interface Session {
  /** Your app's user id. Here made at the first login; in your app, the user already signed in to it. */
  userId?: string;
  /** `state` and `codeVerifier` of the login in progress: secrets, kept only on the server. */
  pendingLogin?: { state: string; codeVerifier: string; scopes: Scope[]; startedAt: number };
}

/**
 * A tiny in-memory session keyed by an httpOnly cookie, so the example needs no extra dependency.
 * Use a real session store in production (express-session with Redis, or your framework's sessions):
 * this one forgets everyone on restart and grows without bound.
 */
class Sessions {
  readonly #byId = new Map<string, Session>();
  readonly #secureCookie: boolean;

  constructor(secureCookie: boolean) {
    this.#secureCookie = secureCookie;
  }

  /** The request's session, created (with its cookie) when it has none. */
  get(req: express.Request, res: express.Response): Session {
    const id = readCookie(req, SESSION_COOKIE);
    const existing = id === undefined ? undefined : this.#byId.get(id);
    if (existing !== undefined) return existing;
    return this.#start(res, {});
  }

  /** A new id for the same data, after login: an id planted before login is worthless after it (session fixation). */
  rotate(req: express.Request, res: express.Response, session: Session): void {
    const id = readCookie(req, SESSION_COOKIE);
    if (id !== undefined) this.#byId.delete(id);
    this.#start(res, session);
  }

  #start(res: express.Response, session: Session): Session {
    const id = randomBytes(32).toString('base64url');
    this.#byId.set(id, session);
    res.cookie(SESSION_COOKIE, id, {
      httpOnly: true, // scripts cannot read it
      sameSite: 'lax', // sent on the top-level redirect back from the service, not on cross-site POSTs
      secure: this.#secureCookie,
      path: '/',
      maxAge: 24 * 60 * 60_000,
    });
    return session;
  }
}

function readCookie(req: express.Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

export function createApp(config: Config, options: AppOptions = {}): express.Express {
  // Only the OAuthClient's own options: it refuses any other key (`port` is this example's).
  const { baseUrl, clientId, clientSecret, redirectUri } = config;
  const oauth = new OAuthClient({ baseUrl, clientId, clientSecret, redirectUri });
  const sessions = new Sessions(config.redirectUri.startsWith('https:'));
  // One object for every user: a client per user, one refresh at a time per user, at most maxUsers kept in memory
  // (the least recently used dropped; their tokens stay in their store).
  const users = new UserClients({
    oauth,
    baseUrl: config.baseUrl,
    ...(options.tokenStoreFor === undefined ? {} : { store: options.tokenStoreFor }),
    maxUsers: 10_000,
    // Once per user whose refresh token stopped working: mark them disconnected in your database, email them…
    onReauthorizationRequired: (userId, error) => console.warn(`User ${userId} must connect again (${error.reason})`),
  });

  const app = express();
  app.disable('x-powered-by');

  app.get('/', (req, res) => {
    const session = sessions.get(req, res);
    if (session.userId !== undefined) return void res.redirect('/accounts');
    page(res, 200, 'Welcome', '<p><a href="/login">Connect your PostSched account</a></p>');
  });

  app.get('/login', async (req, res) => {
    const session = sessions.get(req, res);
    const { url, state, codeVerifier, scopes } = await oauth.createAuthorizationUrl({ scopes: SCOPES });
    session.pendingLogin = { state, codeVerifier, scopes, startedAt: Date.now() };
    res.redirect(url);
  });

  app.get('/callback', async (req, res) => {
    const session = sessions.get(req, res);
    const pending = session.pendingLogin;
    delete session.pendingLogin; // one callback per login: a replayed callback finds nothing
    if (pending === undefined || Date.now() - pending.startedAt > LOGIN_TTL_MS) {
      return page(res, 400, 'This sign-in has expired', '<p>Please <a href="/login">start again</a>.</p>');
    }
    let tokens: TokenSet;
    try {
      tokens = await oauth.exchangeCode(req.originalUrl, pending);
    } catch (error) {
      if (error instanceof OAuthError && error.error === 'access_denied') {
        return page(res, 403, 'Access not granted', '<p>Nothing was connected. <a href="/login">Connect your account</a> when you are ready.</p>');
      }
      if (error instanceof OAuthCallbackError) {
        // state mismatch, wrong issuer, no code: not the answer to the login we started (or a forged one).
        console.warn(`Refused OAuth callback: ${error.code}`);
        return page(res, 400, 'This sign-in could not be verified', '<p>Please <a href="/login">start again</a>.</p>');
      }
      if (error instanceof OAuthError) {
        // invalid_grant (code expired or used), invalid_client (our configuration)…: log it, ask to retry.
        console.warn(`OAuth token request refused: ${error.error}`);
        return page(res, 502, 'PostSched refused the sign-in', '<p>Please <a href="/login">try again</a>.</p>');
      }
      throw error;
    }
    const userId = session.userId ?? randomUUID();
    await users.connect(userId, tokens); // saved through the user's TokenStore
    session.userId = userId;
    sessions.rotate(req, res, session);
    res.redirect('/accounts');
  });

  app.get('/accounts', async (req, res) => {
    const { userId } = sessions.get(req, res);
    if (userId === undefined) return void res.redirect('/login');
    const accounts: Account[] = [];
    try {
      // The manager refreshes an expired token first, and once more if the service answers 401.
      for await (const account of users.client(userId).accounts.list()) accounts.push(account);
    } catch (error) {
      if (error instanceof ReauthorizationRequiredError) {
        // The refresh token was revoked, expired or already used: only the user can fix it.
        return page(res, 401, 'Your PostSched connection has expired', '<p><a href="/login">Connect your account again</a>.</p>');
      }
      if (error instanceof PermissionDeniedError && error.missingScope !== undefined) {
        return page(res, 403, 'Permission needed', `<p>Allow “${escapeHtml(error.missingScope)}”: <a href="/login">connect again</a>.</p>`);
      }
      throw error;
    }
    // Only `id` is in the service's spec; `name` and `platform` are assumed, so each may be missing.
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const items = accounts
      .map((a) => {
        const platform = text(a.platform);
        return `<li>${escapeHtml(text(a.name) ?? a.id)}${platform === undefined ? '' : ` <small>(${escapeHtml(platform)})</small>`}</li>`;
      })
      .join('');
    page(res, 200, 'Your accounts', accounts.length === 0 ? '<p>No connected accounts yet.</p>' : `<ul>${items}</ul>`);
  });

  // Anything else: a generic page. SDK errors never carry tokens, but the details are for your logs only.
  app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    console.error(error);
    page(res, 500, 'Something went wrong', '<p>Please try again later.</p>');
  });

  return app;
}

function page(res: express.Response, status: number, title: string, body: string): void {
  res
    .status(status)
    .type('html')
    .set('cache-control', 'no-store')
    .send(`<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// Listen only when run directly (not when imported by a test).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const config = configFromEnv();
  // 127.0.0.1 only (not every interface); open the redirect URI's origin, so the session cookie comes back to it.
  createApp(config).listen(config.port, '127.0.0.1', () => {
    console.log(`Listening on http://127.0.0.1:${config.port}`);
    console.log(`Open ${new URL(config.redirectUri).origin}/`);
  });
}

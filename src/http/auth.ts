/**
 * The three forms of `auth` a client accepts, behind one small interface the pipeline uses.
 * The token is sent as `Authorization: Bearer <token>` (RFC 6750 §2.1; Assumptions table, "How the access
 * token is presented").
 */
import type { AccessTokenProvider } from '../oauth/types.js';
import { invalidOption } from '../core/invalid-option.js';

/**
 * Where access tokens come from: a `TokenManager` (or any `AccessTokenProvider`), a fixed access token, or
 * a function returning one.
 *
 * @example
 * new PostSched({ baseUrl, auth: tokenManager })
 * new PostSched({ baseUrl, auth: process.env.POSTSCHED_TOKEN! })
 * new PostSched({ baseUrl, auth: async () => vault.read('postsched-token') })
 */
export type Auth = AccessTokenProvider | string | (() => string | Promise<string>);

/** What the pipeline calls: a token per attempt, and a newer one after a 401. @internal */
export interface TokenSource {
  /** A token at once, without a promise, when one is at hand (a fixed token, a fresh cached one); else `undefined`. */
  peek(): string | undefined;
  get(): Promise<string>;
  /** A newer token than `rejected`, or `undefined` when none can be had (the 401 then stands). */
  refresh(rejected: string): Promise<string | undefined>;
}

/** @internal */
export function toTokenSource(auth: Auth): TokenSource {
  if (typeof auth === 'string') {
    checkToken(auth);
    // A fixed token cannot be refreshed: a 401 is final.
    return { peek: () => auth, get: async () => auth, refresh: async () => undefined };
  }
  if (typeof auth === 'function') {
    const call = async () => checkToken(await auth());
    // Asking the function again is the only refresh it offers; a 401 stands if it returns the same token.
    return { peek: () => undefined, get: call, refresh: async (rejected) => ifNewer(await call(), rejected) };
  }
  if (typeof auth === 'object' && auth !== null && typeof auth.getAccessToken === 'function') return new ProviderSource(auth);
  return invalidOption('auth', 'must be a TokenManager (with getAccessToken()), an access token, or a function returning one.');
}

/** A `TokenManager` (or any `AccessTokenProvider`) as a token source: one small object per client, no closures. */
class ProviderSource implements TokenSource {
  readonly #auth: AccessTokenProvider & { peekAccessToken?: () => string | undefined };

  constructor(auth: AccessTokenProvider) {
    this.#auth = auth;
  }

  /** TokenManager's cache read, without a promise: the hot path of every call with a fresh token. */
  peek(): string | undefined {
    const auth = this.#auth;
    const token = typeof auth.peekAccessToken === 'function' ? auth.peekAccessToken() : undefined;
    return token === undefined ? undefined : checkToken(token);
  }

  async get(): Promise<string> {
    return checkToken(await this.#auth.getAccessToken());
  }

  async refresh(rejected: string): Promise<string | undefined> {
    const auth = this.#auth;
    return typeof auth.forceRefresh === 'function' ? ifNewer(checkToken(await auth.forceRefresh(rejected)), rejected) : undefined;
  }
}

function ifNewer(token: string, rejected: string): string | undefined {
  return token === rejected ? undefined : token;
}

/**
 * RFC 6750 §2.1 b64token characters (plus visible ASCII, to be lenient). Checked here because `Headers.set`
 * would put the bad value, i.e. the token, in its own error message.
 */
function checkToken(token: unknown): string {
  if (typeof token !== 'string' || token === '') {
    invalidOption('auth', 'gave an empty or non-string access token.');
  }
  if (!/^[\x21-\x7E]+$/.test(token)) {
    invalidOption('auth', 'gave an access token with characters not allowed in a header (space, line break, non-ASCII).');
  }
  return token;
}

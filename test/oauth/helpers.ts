/**
 * Shared fixtures of the OAuth tests: an in-process msw token endpoint that records what it received, the
 * test's secrets (all marked so a leak is easy to find), and a collector of every error the tests see.
 */
import { inspect } from 'node:util';
import { http, HttpResponse, type HttpResponseResolver } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { OAuthClient, type OAuthClientOptions, type TokenSet } from '@postsched/sdk';

export const BASE_URL = 'https://api.postsched.test';
export const TOKEN_URL = `${BASE_URL}/oauth/token`;
export const REDIRECT_URI = 'https://app.example/callback';
export const CLIENT_ID = 'client_123';
/** Every secret value in these tests contains this marker, so one search finds any leak. */
export const MARK = 'SECRETMARK';
export const CLIENT_SECRET = `cs_${MARK}_client`;

/** Values that must never show up in an error or an inspected object (the marked ones are found by MARK). */
export const extraSecrets = new Set<string>();

export function makeClient(overrides: Partial<OAuthClientOptions> = {}): OAuthClient {
  return new OAuthClient({ baseUrl: BASE_URL, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: REDIRECT_URI, ...overrides });
}

/** An RFC 6749 §5.1 body as the service sends it (wire contract). */
export function tokenBody(n: number | string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    access_token: `at_${MARK}_${n}`,
    token_type: 'Bearer',
    expires_in: 3600,
    refresh_token: `rt_${MARK}_${n}`,
    scope: 'posts:read posts:write',
    ...extra,
  };
}

export function tokenSet(n: number | string, expiresAt: number, extra: Partial<TokenSet> = {}): TokenSet {
  return {
    accessToken: `at_${MARK}_${n}`,
    refreshToken: `rt_${MARK}_${n}`,
    expiresAt,
    scopes: ['posts:read'],
    tokenType: 'bearer',
    ...extra,
  };
}

/** Starts msw for the file; `tokenRequests` holds the form fields of every request to the token endpoint. */
export function useTokenEndpoint() {
  const server = setupServer();
  const tokenRequests: URLSearchParams[] = [];
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => {
    server.resetHandlers();
    tokenRequests.length = 0;
  });
  afterAll(() => server.close());
  return {
    server,
    tokenRequests,
    /** Answers the token endpoint with `resolver`, after recording the form fields. */
    onToken(resolver: HttpResponseResolver) {
      server.use(
        http.post(TOKEN_URL, async (info) => {
          tokenRequests.push(new URLSearchParams(await info.request.clone().text()));
          return resolver(info);
        }),
      );
    },
    /** The token endpoint answers 200 with `body`. */
    answerJson(body: unknown, status = 200) {
      this.onToken(() => HttpResponse.json(body as Record<string, unknown>, { status }));
    },
  };
}

const collected: unknown[] = [];

/** Awaits a promise expected to reject, records the error for the leak sweep, and returns it. */
export async function caught(promise: Promise<unknown> | (() => unknown)): Promise<Error> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    collected.push(error);
    return error as Error;
  }
  throw new Error('expected a rejection, got a value');
}

/** Every way a user or a logger might render a value: inspect (deep, hidden), JSON, message and stack. */
export function renderAll(value: unknown): string {
  const parts = [inspect(value, { depth: Infinity, showHidden: true }), safeJson(value)];
  for (let e: unknown = value; e instanceof Error; e = e.cause) parts.push(e.message, e.stack ?? '', safeJson(e.cause));
  return parts.join('\n');
}

export function expectNoSecretsIn(values: readonly unknown[]): void {
  for (const value of values) {
    const text = renderAll(value);
    expect(text).not.toContain(MARK);
    expect(text).not.toContain('cs_');
    for (const secret of extraSecrets) expect(text).not.toContain(secret);
  }
}

/** Call in the last test of a file: no error caught in that file shows a secret, however it is printed. */
export function expectNoSecretsInCollectedErrors(minimum: number): void {
  expect(collected.length).toBeGreaterThanOrEqual(minimum);
  expectNoSecretsIn(collected);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** A promise with its resolve function outside, to hold a handler or callback until the test releases it. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Test helpers: PKCE and the OAuth dance done by hand with node:crypto and plain fetch, so these tests
 * check the fake against the standards independently of the SDK's own OAuth code.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createFakeService, type FakeService, type FakeServiceOptions } from '@postsched/sdk/testing';

export const CLIENT = {
  clientId: 'client_test',
  clientSecret: 'secret_test_123',
  redirectUris: ['http://localhost:3000/callback'],
};
export const REDIRECT_URI = 'http://localhost:3000/callback';
export const ALL_SCOPES = ['accounts:read', 'posts:read', 'posts:write', 'media:write', 'analytics:read'];

/** RFC 7636 §4.1 verifier and §4.2 S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** How a test reaches the fake: calling its handler, or real HTTP on 127.0.0.1. */
export type Mode = 'handler' | 'listen';
export const MODES: Mode[] = ['handler', 'listen'];

export interface Harness {
  fake: FakeService;
  baseUrl: string;
  /** fetch relative to the base URL. */
  call(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function start(mode: Mode, options: FakeServiceOptions = {}): Promise<Harness> {
  const fake = createFakeService({ apps: [CLIENT], ...options });
  if (mode === 'listen') {
    const server = await fake.listen();
    return {
      fake,
      baseUrl: server.url,
      call: (path, init) => fetch(`${server.url}${path}`, { redirect: 'manual', ...init }),
      close: () => fake.close(),
    };
  }
  return {
    fake,
    baseUrl: fake.baseUrl,
    call: (path, init) => fake.handler(new Request(`${fake.baseUrl}${path}`, init)),
    close: () => fake.close(),
  };
}

export function authorizeQuery(overrides: Record<string, string | undefined> = {}, challenge = pkce().challenge): string {
  const params: Record<string, string | undefined> = {
    client_id: CLIENT.clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: ALL_SCOPES.join(' '),
    state: 'state_abc',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  return `/oauth/authorize?${q}`;
}

export function form(fields: Record<string, string | undefined>): RequestInit {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) body.set(k, v);
  return { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() };
}

/** A refresh-token request as the client's `fetch` sends it (RFC 6749 §6); `extra` adds form fields (`scope`). */
export function refreshRequest(h: Harness, refreshToken: string, extra: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  const init = form({ grant_type: 'refresh_token', client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret, refresh_token: refreshToken, ...extra });
  return h.call('/oauth/token', signal === undefined ? init : { ...init, signal });
}

/** Runs authorize and returns the code and verifier. */
export async function getCode(h: Harness, scopes = ALL_SCOPES): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkce();
  const res = await h.call(authorizeQuery({ scope: scopes.join(' ') }, challenge));
  const location = new URL(res.headers.get('location') ?? 'http://missing/');
  const code = location.searchParams.get('code');
  if (res.status !== 302 || code === null) throw new Error(`authorize failed: ${res.status} ${location}`);
  return { code, verifier };
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
  token_type: string;
}

/** The full authorization-code flow with PKCE; returns the token answer. */
export async function login(h: Harness, scopes = ALL_SCOPES): Promise<Tokens> {
  const { code, verifier } = await getCode(h, scopes);
  const res = await h.call(
    '/oauth/token',
    form({
      grant_type: 'authorization_code',
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    }),
  );
  if (res.status !== 200) throw new Error(`token failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as Tokens;
}

export function bearer(token: string, init: RequestInit = {}): RequestInit {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  return { ...init, headers };
}

export function jsonBody(method: string, body: unknown, token: string, extra: Record<string, string> = {}): RequestInit {
  return bearer(token, { method, headers: { 'content-type': 'application/json', ...extra }, body: JSON.stringify(body) });
}

/** Verifies `t=…,v1=…` as the spec's receiver does, with node:crypto. */
export function verifySignature(header: string, body: string, secret: string): { ok: boolean; t: number } {
  const t = /(?:^|,)t=(\d+)/.exec(header)?.[1];
  const v1 = /(?:^|,)v1=([0-9a-f]{64})(?:,|$)/.exec(header)?.[1];
  if (t === undefined || v1 === undefined) return { ok: false, t: Number.NaN };
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return { ok: timingSafeEqual(expected, Buffer.from(v1, 'hex')), t: Number(t) };
}

/** A publish time `ms` after the fake's clock. */
export function inFuture(fake: FakeService, ms = 60_000): string {
  return new Date(fake.clock.now() + ms).toISOString();
}

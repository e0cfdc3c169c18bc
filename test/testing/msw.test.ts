import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFakeService } from '@postsched/sdk/testing';
import { authorizeQuery, CLIENT, form, pkce, REDIRECT_URI } from './helpers.js';

const BASE = 'https://api.postsched.test/v1';
const fake = createFakeService({ baseUrl: BASE, apps: [CLIENT] });
const server = setupServer(...fake.mswHandlers(http));

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(async () => {
  server.close();
  await fake.close();
});

describe('the fake through msw', () => {
  it('serves the OAuth flow and the API to plain fetch under a base URL with a path', async () => {
    const { verifier, challenge } = pkce();
    const auth = await fetch(`${BASE}${authorizeQuery({}, challenge)}`, { redirect: 'manual' });
    expect(auth.status).toBe(302);
    const location = new URL(auth.headers.get('location') as string);
    expect(location.searchParams.get('iss')).toBe(BASE);
    const token = await fetch(
      `${BASE}/oauth/token`,
      form({
        grant_type: 'authorization_code',
        client_id: CLIENT.clientId,
        client_secret: CLIENT.clientSecret,
        code: location.searchParams.get('code') as string,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      }),
    );
    const { access_token } = await token.json();
    const accounts = await fetch(`${BASE}/accounts`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(accounts.status).toBe(200);
    expect(accounts.headers.get('x-request-id')).toMatch(/^req_/);
    expect((await accounts.json()).data).toHaveLength(2);
  });

  it('answers 404 for a path under the base URL that is no route', async () => {
    const res = await fetch(`${BASE}/nothing/here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('makes fetch reject with a TypeError for a reset fault, as on a dropped connection', async () => {
    fake.faults.reset({ path: '/accounts' });
    await expect(fetch(`${BASE}/accounts`)).rejects.toThrow(TypeError);
    expect((await fetch(`${BASE}/accounts`)).status).toBe(401);
  });
});

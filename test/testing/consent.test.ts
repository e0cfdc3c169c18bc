/**
 * `consent: 'prompt'`: the fake's consent page and its Allow / Deny form, over the handler and real HTTP.
 * (test/browser/consent-page.test.ts clicks the same buttons in a real headless Chromium.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_SCOPES, authorizeQuery, CLIENT, type Harness, MODES, pkce, REDIRECT_URI, start } from './helpers.js';

/** The consent form's one-time id, read from the page as a browser would submit it. */
function consentId(html: string): string {
  const id = /name="consent_id" value="([^"]+)"/.exec(html)?.[1];
  if (id === undefined) throw new Error(`no consent form in the page:\n${html}`);
  return id;
}

const answer = (h: Harness, fields: Record<string, string>, type = 'application/x-www-form-urlencoded') =>
  h.call('/oauth/authorize', { method: 'POST', headers: { 'content-type': type }, body: new URLSearchParams(fields).toString() });

describe.each(MODES)('the consent page over %s', (mode) => {
  let h: Harness;
  afterEach(() => h.close());

  it('shows the app name and every requested scope with what it grants, and no redirect yet', async () => {
    h = await start(mode, { consent: 'prompt', apps: [{ ...CLIENT, clientId: 'client_named', name: 'Acme <Scheduler>' }] });
    const res = await h.call(authorizeQuery({ client_id: 'client_named', scope: 'posts:read posts:write' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).toContain('<strong>Acme &#60;Scheduler&#62;</strong> wants to use your Post Scheduling account');
    expect(html).toContain('<li><code>posts:read</code> Read your scheduled and published posts</li>');
    expect(html).toContain('<li><code>posts:write</code> Create, update and delete your posts</li>');
    expect(html).not.toContain('accounts:read');
    expect(html).toMatch(/<button type="submit" name="decision" value="allow" id="allow">Allow<\/button>/);
    expect(html).toMatch(/<button type="submit" name="decision" value="deny" id="deny">Deny<\/button>/);
  });

  it('Allow redirects with code, state and iss, and the code exchanges for tokens', async () => {
    h = await start(mode, { consent: 'prompt' });
    const { verifier, challenge } = pkce();
    const page = await (await h.call(authorizeQuery({}, challenge))).text();
    const res = await answer(h, { consent_id: consentId(page), decision: 'allow' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('state')).toBe('state_abc');
    expect(location.searchParams.get('iss')).toBe(h.fake.baseUrl);
    const tokens = await h.call('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code', client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret,
        code: location.searchParams.get('code') ?? '', redirect_uri: REDIRECT_URI, code_verifier: verifier,
      }).toString(),
    });
    expect(tokens.status).toBe(200);
    expect(await tokens.json()).toMatchObject({ scope: ALL_SCOPES.join(' ') });
  });

  it('Deny redirects with access_denied and the state', async () => {
    h = await start(mode, { consent: 'prompt' });
    const page = await (await h.call(authorizeQuery())).text();
    const res = await answer(h, { consent_id: consentId(page), decision: 'deny' });
    const location = new URL(res.headers.get('location') ?? '');
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'access_denied', error_description: 'The user denied the request.', state: 'state_abc', iss: h.fake.baseUrl,
    });
    expect(location.searchParams.has('code')).toBe(false);
  });

  it('answers each page once: a replayed, unknown, expired or oversized answer gets an error page, not a redirect', async () => {
    h = await start(mode, { consent: 'prompt' });
    const id = consentId(await (await h.call(authorizeQuery())).text());
    expect((await answer(h, { consent_id: id, decision: 'allow' })).status).toBe(302);
    const replay = await answer(h, { consent_id: id, decision: 'allow' });
    expect(replay.status).toBe(400);
    expect(replay.headers.get('location')).toBeNull();
    expect(await replay.text()).toContain('expired or was already answered');
    expect((await answer(h, { consent_id: 'consent_forged', decision: 'allow' })).status).toBe(400);

    const late = consentId(await (await h.call(authorizeQuery())).text());
    await h.fake.clock.advance(10 * 60_000);
    expect((await answer(h, { consent_id: late, decision: 'allow' })).status).toBe(400);

    const big = consentId(await (await h.call(authorizeQuery())).text());
    expect((await answer(h, { consent_id: big, decision: 'allow', padding: 'x'.repeat(10_000) })).status).toBe(400);
    expect((await answer(h, { consent_id: big, decision: 'maybe' })).status).toBe(400);
    expect((await answer(h, { consent_id: big, decision: 'allow' }, 'text/plain')).status).toBe(400);
    expect((await answer(h, { consent_id: big, decision: 'allow' })).status).toBe(302); // still answerable once
  });

  it('checks the request before showing a page: a bad redirect_uri gets no page and no redirect', async () => {
    h = await start(mode, { consent: 'prompt' });
    const res = await h.call(authorizeQuery({ redirect_uri: 'http://evil.example/cb' }));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('keeps automatic consent by default, and setConsent switches between the three modes', async () => {
    h = await start(mode);
    expect((await h.call(authorizeQuery())).status).toBe(302);
    h.fake.setConsent('prompt');
    expect((await h.call(authorizeQuery())).status).toBe(200);
    h.fake.setConsent('deny');
    const denied = await h.call(authorizeQuery());
    expect(new URL(denied.headers.get('location') ?? '').searchParams.get('error')).toBe('access_denied');
  });
});

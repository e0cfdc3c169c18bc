import { inspect } from 'node:util';
import { HttpResponse } from 'msw';
import * as oauth4webapi from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { MemoryTokenStore, TokenManager } from '@postsched/sdk';
import {
  CLIENT_SECRET,
  MARK,
  REDIRECT_URI,
  caught,
  expectNoSecretsIn,
  expectNoSecretsInCollectedErrors,
  extraSecrets,
  makeClient,
  renderAll,
  tokenBody,
  tokenSet,
  useTokenEndpoint,
} from './helpers.js';

const endpoint = useTokenEndpoint();

describe('redaction', () => {
  it('the leak check finds a token in a raw oauth4webapi error, which is why those are never passed on', async () => {
    const as = { issuer: 'https://as.test', token_endpoint: 'https://as.test/token' };
    const response = Response.json({ access_token: `at_${MARK}_raw` }); // no token_type: oauth4webapi rejects it
    const raw = await oauth4webapi.processRefreshTokenResponse(as, { client_id: 'c' }, response).catch((error: unknown) => error);
    expect(renderAll(raw)).toContain(MARK);
  });

  it('util.inspect, console.log and JSON.stringify of OAuthClient, TokenManager and MemoryTokenStore show no secret', async () => {
    const oauth = makeClient();
    const store = new MemoryTokenStore(tokenSet(1, Date.now() + 3_600_000));
    const manager = new TokenManager({ oauth, store });
    await manager.getAccessToken(); // the manager now caches the tokens too
    for (const value of [oauth, store, manager, { nested: { oauth, manager, store } }]) {
      const text = `${inspect(value, { depth: Infinity, showHidden: true })}\n${JSON.stringify(value)}\n${String(value)}`;
      expect(text).not.toContain(MARK);
      expect(text).not.toContain(CLIENT_SECRET);
    }
    expect(inspect(oauth)).toContain('clientSecret: [redacted]');
    expect(inspect(manager)).toMatch(/TokenManager \{ refreshMarginMs: 60000, hasTokens: true, expiresAt: /);
    expect(JSON.parse(JSON.stringify(store))).toEqual({ hasTokens: true });
    expect(inspect(store)).toMatch(/^MemoryTokenStore \{ hasTokens: true, expiresAt: /);
  });

  it('shows no secret in the errors of a whole failing flow: bad callback, refused code, broken answers, refused refresh', async () => {
    const oauth = makeClient();
    const pending = await oauth.createAuthorizationUrl({ scopes: ['posts:read'] });
    extraSecrets.add(pending.codeVerifier).add(pending.state);
    const callback = `${REDIRECT_URI}?code=code_${MARK}_9&state=${pending.state}`;
    const names: string[] = [];
    const caughtName = async (promise: Promise<unknown>) => {
      const error = await caught(promise);
      return `${error.name}:${String((error as { code?: unknown; error?: unknown }).code ?? (error as { error?: unknown }).error ?? '')}`;
    };

    names.push(await caughtName(oauth.exchangeCode(`${REDIRECT_URI}?code=code_${MARK}_9&state=wrong`, pending)));
    names.push(await caughtName(oauth.exchangeCode(`${REDIRECT_URI}?code=code_${MARK}_9&state=${pending.state}&iss=https://evil.test`, pending)));
    names.push(await caughtName(oauth.exchangeCode(`${REDIRECT_URI}?error=server_error&state=${pending.state}`, pending)));
    endpoint.answerJson({ error: 'invalid_grant' }, 400);
    names.push(await caughtName(oauth.exchangeCode(callback, pending)));
    endpoint.answerJson({ ...tokenBody(9), access_token: 42 });
    names.push(await caughtName(oauth.exchangeCode(callback, pending)));
    endpoint.answerJson({ ...tokenBody(9), refresh_token: 42 }); // no string (an unusable expires_in is read as absent)
    names.push(await caughtName(oauth.exchangeCode(callback, pending)));
    endpoint.answerJson({ ...tokenBody(9), token_type: 'mac' });
    names.push(await caughtName(oauth.exchangeCode(callback, pending)));
    endpoint.onToken(() => new HttpResponse(JSON.stringify(tokenBody(9)), { status: 201, headers: { 'content-type': 'application/json' } }));
    names.push(await caughtName(oauth.exchangeCode(callback, pending)));
    endpoint.onToken(() => HttpResponse.error());
    names.push(await caughtName(oauth.refresh(`rt_${MARK}_9`)));
    endpoint.answerJson({ error: 'invalid_grant', error_description: 'revoked' }, 400);
    const manager = new TokenManager({ oauth, store: new MemoryTokenStore(tokenSet(9, Date.now() - 1)) });
    names.push(await caughtName(manager.getAccessToken()));
    names.push(await caughtName(manager.forceRefresh(`at_${MARK}_9`)));

    expect(names).toEqual([
      'OAuthCallbackError:state_mismatch',
      'OAuthCallbackError:issuer_mismatch',
      'OAuthError:server_error',
      'OAuthError:invalid_grant',
      'OAuthResponseError:invalid_body',
      'OAuthResponseError:invalid_body',
      'OAuthResponseError:unsupported_token_type',
      'OAuthResponseError:unexpected_status',
      'ConnectionError:',
      'ReauthorizationRequiredError:invalid_grant',
      'ReauthorizationRequiredError:invalid_grant',
    ]);
    expect(endpoint.tokenRequests.length).toBeGreaterThanOrEqual(7);
    expectNoSecretsIn([oauth, manager]);
    expectNoSecretsInCollectedErrors(11);
  });
});

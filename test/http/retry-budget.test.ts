/**
 * The retry budget: retries ≤ 10 + 10 % of the answers that were no failure to retry, shared by the clients that
 * share a rate limiter (a lone client and its withOptions copies; every client of a UserClients). Counted: requests
 * the service received, never time (the 503s carry `Retry-After: 0`, so that retries go at once).
 */
import { describe, expect, it } from 'vitest';
import { InternalServerError, PostSched, UserClients } from '@postsched/sdk';

/** A service answering 503 while `down`, else 200; `flaky` more 503s first, whatever `down` says. */
function service() {
  const state = { down: true, flaky: 0, requests: 0 };
  const fetch = async () => {
    state.requests++;
    if (state.down || state.flaky > 0) {
      state.flaky = Math.max(0, state.flaky - 1);
      return new Response('{"error":{"message":"down"}}', { status: 503, headers: { 'retry-after': '0', 'content-type': 'application/json' } });
    }
    return new Response('{"id":"post_1","account_ids":["acc_1"]}', { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { state, fetch };
}
const BASE = 'https://api.postsched.test/v1';
const expiresAt = Date.now() + 3_600_000;

describe('the retry budget', () => {
  it('a lone client in an outage: 10 retries in all, then each call fails at once with its last error; its withOptions copy shares it', async () => {
    const { state, fetch } = service();
    const client = new PostSched({ baseUrl: BASE, auth: 'tok_budget', fetch });
    const copy = client.withOptions({ timeoutMs: 5_000 });
    for (let i = 0; i < 50; i++) {
      const error = await (i % 2 === 0 ? client : copy).posts.get('post_1').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InternalServerError);
    }
    expect(state.requests).toBe(50 + 10);

    // Recovered: every answer gives a tenth of a retry back; after 20, a call has its 2 retries again.
    state.down = false;
    for (let i = 0; i < 20; i++) await client.posts.get('post_1');
    state.flaky = 2;
    const before = state.requests;
    await expect(copy.posts.get('post_1')).resolves.toMatchObject({ id: 'post_1' });
    expect(state.requests - before).toBe(3);
  });

  it('a healthy client keeps its retries: one call in 20 answered 503 twice still gets both retries', async () => {
    const { state, fetch } = service();
    state.down = false;
    const client = new PostSched({ baseUrl: BASE, auth: 'tok_budget', fetch });
    for (let i = 0; i < 200; i++) {
      state.flaky = i % 20 === 0 ? 2 : 0; // one call in 20 answered 503 twice: 10 % of the calls retried
      await client.posts.get('post_1');
    }
    expect(state.requests).toBe(200 + 10 * 2);
  });

  it("the clients of a UserClients share one budget; a lone client's is its own", async () => {
    const { state, fetch } = service();
    const oauth = { refresh: () => Promise.reject(new Error('no refresh here')) };
    const users = new UserClients({ oauth, baseUrl: BASE, clientOptions: { fetch } });
    for (const id of ['u1', 'u2', 'u3']) await users.connect(id, { accessToken: `tok_${id}`, tokenType: 'bearer', scopes: [], expiresAt });
    for (let i = 0; i < 30; i++) await users.client(['u1', 'u2', 'u3'][i % 3]!).posts.get('post_1').catch(() => undefined);
    expect(state.requests).toBe(30 + 10);

    const lone = new PostSched({ baseUrl: BASE, auth: 'tok_lone', fetch });
    const before = state.requests;
    await lone.posts.get('post_1').catch(() => undefined);
    expect(state.requests - before).toBe(3);
  });

  it("a 429's retries are not drawn from it (the service's wait, held by the rate limiter, paces them)", async () => {
    let requests = 0;
    const fetch = async () => {
      requests++;
      return new Response('{}', { status: 429, headers: { 'retry-after': '0', 'content-type': 'application/json' } });
    };
    const client = new PostSched({ baseUrl: BASE, auth: 'tok_budget', fetch });
    for (let i = 0; i < 20; i++) await client.posts.get('post_1').catch(() => undefined);
    expect(requests).toBe(20 * 3);
  });
});

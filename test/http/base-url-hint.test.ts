/**
 * "What is the base URL?": the one with or without `/v1`. A client whose `baseUrl` has a path the service does not
 * serve under gets a 404 on its first call; the error then says where the path went and how to fix it, and only
 * when that is the likely cause (a path in `baseUrl`, no 2xx yet, a route without an id or an answer about routes).
 */
import { describe, expect, it } from 'vitest';
import { NotFoundError, PostSched } from '@postsched/sdk';
import { createFakeService } from '@postsched/sdk/testing';

const HINT = /No call of this client has succeeded yet, and `baseUrl` ends in \/v1, put before every route \(GET \/v1\/accounts\): if the service is not under \/v1, remove it\.$/;

/** A client of the fake (served at the root of its base URL) with `baseUrl`, through the fake's fetch handler. */
function setup(fakeBase: string, clientBase: string) {
  const fake = createFakeService({ baseUrl: fakeBase });
  const client = new PostSched({ baseUrl: clientBase, auth: fake.issueTokens().access_token, fetch: (input, init) => fake.handler(new Request(input, init)), maxRetries: 0 });
  return { fake, client };
}

describe('a 404 on the first call of a client whose baseUrl has a path', () => {
  it('says the path goes before every route and to take it out when the service does not serve under it', async () => {
    const { client } = setup('https://api.postsched.test', 'https://api.postsched.test/v1');
    const error = await client.accounts.list().toArray().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toMatch(/^404 Not Found: No route GET \/v1\/accounts/);
    expect((error as Error).message).toMatch(HINT);
  });

  it('says it when the answer to a route with an id speaks of a route', async () => {
    const { client } = setup('https://api.postsched.test', 'https://api.postsched.test/v1');
    const error = await client.posts.get('post_1').catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/\(GET \/v1\/posts\/\{id\}\): if the service is not under \/v1, remove it\.$/);
  });

  it('does not say it for a missing item, once the client has had a 2xx, or for a baseUrl without a path', async () => {
    const right = setup('https://api.postsched.test/v1', 'https://api.postsched.test/v1');
    // A missing post, on the first call: an answer about the item, not the route.
    const missing = await right.client.posts.get('post_nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as Error).message).not.toMatch(/baseUrl/);

    // The same 404 of a route after a 2xx: the base URL is right.
    await right.client.accounts.list().toArray();
    const later = await right.client.get('/no-such-route').catch((e: unknown) => e);
    expect(later).toBeInstanceOf(NotFoundError);
    expect((later as Error).message).toMatch(/No route GET \/no-such-route/);
    expect((later as Error).message).not.toMatch(/baseUrl/);

    // A service under /v1 and a baseUrl without it: nothing in the base URL to blame without guessing.
    const bare = setup('https://api.postsched.test/v1', 'https://api.postsched.test');
    const error = await bare.client.accounts.list().toArray().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).not.toMatch(/baseUrl/);
  });
});

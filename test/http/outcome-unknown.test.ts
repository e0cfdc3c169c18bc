/**
 * A write whose answer was lost after it may have reached the service is told apart (`isOutcomeUnknown`) from one
 * that certainly never left, carries its idempotency key and request id, and is never sent again without a key.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionError, isOutcomeUnknown, PostSched, TimeoutError } from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';

const POST = { account_ids: ['acc_demo_x'], text: 'hello' };
let fake: FakeService | undefined;
afterEach(() => fake?.close());

async function overTcp(): Promise<{ fake: FakeService; client: PostSched }> {
  fake = createFakeService();
  const server = await fake.listen();
  return { fake, client: new PostSched({ baseUrl: server.url, auth: fake.issueTokens().access_token }) };
}

describe('a write whose answer was lost', () => {
  it('after the service acted (the socket closed instead of answering): outcome unknown, still a ConnectionError, sent once', async () => {
    const { fake, client } = await overTcp();
    fake.faults.reset({ method: 'POST', path: '/posts', afterCommit: true });
    const error = await client.posts.create({ ...POST, publish_at: new Date(fake.clock.now() + 60_000).toISOString() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(isOutcomeUnknown(error)).toBe(true);
    expect(error).toMatchObject({ idempotencyKey: undefined });
    expect((error as Error).message).toMatch(/^POST \/posts: the answer was lost after the request was sent \(.+\)\. The service may have acted on it: the call had no idempotencyKey/);
    expect((error as Error).message).not.toContain('Could not reach');
    expect(fake.stats.requests['POST /posts']).toBe(1);
    expect(fake.stats.postsCreated).toBe(1);
  });

  it('with a key: re-sent with it (the service replays), and when every attempt is lost the error carries the key', async () => {
    const { fake, client } = await overTcp();
    fake.faults.reset({ method: 'POST', path: '/posts', times: 3, afterCommit: true });
    const error = await client.posts.create({ ...POST, publish_at: new Date(fake.clock.now() + 60_000).toISOString() }, { idempotencyKey: 'key_once_1' }).catch((e: unknown) => e);
    expect(isOutcomeUnknown(error)).toBe(true);
    expect(error).toMatchObject({ idempotencyKey: 'key_once_1' });
    expect((error as Error).message).toContain('send it again with the same idempotencyKey');
    expect(fake.stats.requests['POST /posts']).toBe(3);
    expect(fake.stats.postsCreated).toBe(1);
  });

  it('a time-out once fetch had the request: outcome unknown, a TimeoutError, with the request id of the answer whose body stalled', async () => {
    const client = new PostSched({
      baseUrl: 'https://api.postsched.test/v1',
      auth: 'tok_unknown',
      timeoutMs: 50,
      maxRetries: 0,
      fetch: async (input) =>
        new Response(new ReadableStream({ start: (c) => (input as Request).signal.addEventListener('abort', () => c.error(new Error('aborted'))) }), { status: 201, headers: { 'x-request-id': 'req_stall' } }),
    });
    const error = await client.posts.delete('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(isOutcomeUnknown(error)).toBe(true);
    expect(error).toMatchObject({ requestId: 'req_stall' });
  });

  it('refused connection: certainly never left, so not unknown (and re-sent, as before)', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const client = new PostSched({ baseUrl: `http://127.0.0.1:${port}/v1`, auth: 'tok_refused', maxRetries: 1 });
    const error = await client.posts.create({ ...POST, publish_at: '2030-01-01T00:00:00Z' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(isOutcomeUnknown(error)).toBe(false);
  });

  it('a reset of a read is a plain ConnectionError (a GET changes nothing)', async () => {
    const { fake, client } = await overTcp();
    fake.faults.reset({ method: 'GET', path: '/posts/{id}', times: 3 });
    const error = await client.posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(isOutcomeUnknown(error)).toBe(false);
  });
});

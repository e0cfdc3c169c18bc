import { afterEach, describe, expect, it, vi } from 'vitest';
import { InternalServerError, PostSched } from '@postsched/sdk';
import { startFake, type Started } from './harness.js';

let started: Started | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await started?.fake.close();
  started = undefined;
});

const newPost = (s: Started) => ({ account_ids: ['acc_demo_x'], publish_at: new Date(s.fake.clock.now() + 3_600_000), text: 'Once' });

/**
 * A fetch that loses the service's first answer to POST /posts and puts a 503 in its place, as a proxy or a
 * load balancer does when the service acted but the answer never made it back.
 */
function losingFirstPostAnswer(): (input: Request, init?: RequestInit) => Promise<Response> {
  let lost = false;
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!lost && input.method === 'POST' && new URL(input.url).pathname === '/posts') {
      lost = true;
      await response.body?.cancel();
      return Response.json(
        { error: { code: 'service_unavailable', message: 'upstream answer lost' } },
        { status: 503, headers: { 'x-request-id': 'req_proxy_503' } },
      );
    }
    return response;
  };
}

describe('POST /posts under injected 503s, SDK against the fake over HTTP on 127.0.0.1', () => {
  it('is sent once without an idempotency key: InternalServerError, and no post was created', async () => {
    started = await startFake();
    const s = started;
    s.fake.faults.error({ method: 'POST', path: '/posts', status: 503, times: 3 });
    const client = new PostSched({ baseUrl: s.baseUrl, auth: s.fake.issueTokens().access_token });
    const error = await client.posts.create(newPost(s)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as InternalServerError).requestId).toMatch(/^req_/);
    expect(s.fake.stats.requests['POST /posts']).toBe(1);
    expect(s.fake.stats.postsCreated).toBe(0);
  });

  it('is retried with an idempotency key until the service recovers, and creates exactly one post', async () => {
    started = await startFake();
    const s = started;
    s.fake.faults.error({ method: 'POST', path: '/posts', status: 503, times: 2 });
    const client = new PostSched({ baseUrl: s.baseUrl, auth: s.fake.issueTokens().access_token });
    const post = await client.posts.create(newPost(s), { idempotencyKey: 'schedule-once-1' });
    expect(s.fake.getPost(post.id)?.status).toBe('scheduled');
    expect(s.fake.stats.requests['POST /posts']).toBe(3);
    expect(s.fake.stats.postsCreated).toBe(1);
  });

  it('when the service acted but its answer was lost: exactly 1 post after the InternalServerError (no blind re-send)', async () => {
    started = await startFake();
    const s = started;
    const client = new PostSched({ baseUrl: s.baseUrl, auth: s.fake.issueTokens().access_token, fetch: losingFirstPostAnswer() });
    const error = await client.posts.create(newPost(s)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 503, requestId: 'req_proxy_503' });
    expect(s.fake.stats.requests['POST /posts']).toBe(1);
    expect(s.fake.stats.postsCreated).toBe(1);
  });

  it('when the answer was lost, the retried POST with an idempotency key gets the stored answer: still exactly 1 post', async () => {
    started = await startFake();
    const s = started;
    const client = new PostSched({ baseUrl: s.baseUrl, auth: s.fake.issueTokens().access_token, fetch: losingFirstPostAnswer() });
    const { data: post, response } = await client.posts.create(newPost(s), { idempotencyKey: 'schedule-once-2' }).withResponse();
    expect(s.fake.stats.requests['POST /posts']).toBe(2);
    expect(s.fake.stats.postsCreated).toBe(1);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(s.fake.getPost(post.id)?.text).toBe('Once');
    const all = await client.posts.list().toArray();
    expect(all.map((p) => p.id)).toEqual([post.id]);
  });
});

/** Waits for real I/O without moving the fake timers (vi.waitFor would advance them). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('429 with Retry-After from the fake', () => {
  it('waits exactly the Retry-After seconds, then re-sends (a 429 proves nothing was done, so even a POST without a key)', async () => {
    started = await startFake();
    const s = started;
    const sentAt: number[] = [];
    const answered: number[] = [];
    const client = new PostSched({
      baseUrl: s.baseUrl,
      auth: s.fake.issueTokens().access_token,
      fetch: async (input, init) => {
        sentAt.push(Date.now());
        const response = await fetch(input, init);
        answered.push(Date.now());
        return response;
      },
    });
    s.fake.faults.rateLimit({ method: 'POST', path: '/posts', retryAfter: 2 });
    // Only the SDK's timers and Date are faked: sockets stay real, and the wait is measured on the fake clock.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const creating = client.posts.create(newPost(s));
    await until(() => answered.length === 1);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(sentAt).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => sentAt.length === 2);
    vi.useRealTimers();
    const post = await creating;
    expect(s.fake.getPost(post.id)?.status).toBe('scheduled');
    expect((sentAt[1] as number) - (sentAt[0] as number)).toBe(2_000);
    expect(s.fake.stats.requests['POST /posts']).toBe(2);
    expect(s.fake.stats.postsCreated).toBe(1);
  });
});

/**
 * createWebhookHandler through its Fetch adapter (in-process Requests), on both entries: answers, typed dispatch,
 * duplicate, failing and forged deliveries, dedupe stores, onError. The node:http adapter: handler-node.test.ts.
 */
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { NOW, SECRET, T, backends, header, publishedBody } from './backends.js';
import type { UnknownWebhookEvent, WebhookEvent } from '../../src/webhooks/index.js';

const URL_ = 'https://app.example/webhooks/postsched';
const failedBody = JSON.stringify({
  event: 'post.failed',
  created_at: '2024-05-01T12:05:00Z',
  data: { id: 'post_1', account_ids: ['acc_1'] },
});
const unknownBody = JSON.stringify({ event: 'post.archived', created_at: '2024-05-01T13:00:00Z', data: { id: 'post_1' } });

/** A delivery as the service sends it: POST, JSON, signed at `t` (a retry may be signed anew, at a later t). */
function delivery(body = publishedBody, { t = T, secret = SECRET, method = 'POST' } = {}): Request {
  return new Request(URL_, {
    method,
    ...(method === 'GET' || method === 'HEAD' ? {} : { body }),
    headers: { 'content-type': 'application/json', 'x-service-signature': header(secret, t, body) },
  });
}

afterEach(() => vi.restoreAllMocks());

describe.each(backends)('createWebhookHandler().fetch ($name)', ({ api }) => {
  const { createWebhookHandler, WebhookVerificationError } = api;
  type Options = Parameters<typeof createWebhookHandler>[0];
  const make = (options: Partial<Options> = {}) =>
    createWebhookHandler({ secret: SECRET, now: NOW, on: {}, onError: () => {}, ...options });

  it('runs the handler of the event, typed by its name, then answers 204', async () => {
    const seen: string[] = [];
    const webhooks = make({
      on: {
        'post.published': (event) => {
          expectTypeOf(event.event).toEqualTypeOf<'post.published'>();
          expectTypeOf(event.data.published_at).toEqualTypeOf<string>();
          seen.push(`${event.event} ${event.data.id} ${event.data.published_at}`);
        },
        'post.failed': (event) => {
          expectTypeOf(event.event).toEqualTypeOf<'post.failed'>();
          expectTypeOf(event.data.published_at).toEqualTypeOf<unknown>(); // typed only on post.published
          expectTypeOf(event.data.account_ids).toEqualTypeOf<string[] | undefined>(); // the spec does not show it
          seen.push(`${event.event} ${event.data.account_ids?.join()}`);
        },
      },
    });
    const published = await webhooks.fetch(delivery());
    expect(published.status).toBe(204);
    expect(await published.text()).toBe('');
    expect((await webhooks.fetch(delivery(failedBody))).status).toBe(204);
    expect(seen).toEqual(['post.published post_1 2024-05-01T12:00:00Z', 'post.failed acc_1']);
  });

  it('answers only after an async handler finished', async () => {
    let finish!: () => void;
    const webhooks = make({ on: { 'post.published': () => new Promise<void>((resolve) => (finish = resolve)) } });
    let answered = false;
    const response = webhooks.fetch(delivery()).then((r) => {
      answered = true;
      return r;
    });
    await vi.waitFor(() => expect(finish).toBeTypeOf('function'));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    finish();
    expect((await response).status).toBe(204);
  });

  it('is usable unbound: export const POST = webhooks.fetch', async () => {
    const handled = vi.fn();
    const { fetch: POST } = make({ on: { 'post.published': handled } });
    expect((await POST(delivery())).status).toBe(204);
    expect(handled).toHaveBeenCalledOnce();
  });

  describe('duplicate deliveries', () => {
    it('runs the handler once for a delivery sent twice, and answers 204 both times', async () => {
      const handled = vi.fn();
      const webhooks = make({ on: { 'post.published': handled } });
      expect((await webhooks.fetch(delivery())).status).toBe(204);
      expect((await webhooks.fetch(delivery())).status).toBe(204);
      expect(handled).toHaveBeenCalledOnce();
    });

    it('recognizes a retry signed anew (a later t, another v1) as the same event', async () => {
      const handled = vi.fn();
      const webhooks = make({ on: { 'post.published': handled } });
      await webhooks.fetch(delivery(publishedBody, { t: T }));
      await webhooks.fetch(delivery(publishedBody, { t: T + 60 }));
      expect(handled).toHaveBeenCalledOnce();
    });


    it('treats two events of one post as two events', async () => {
      const handled = vi.fn();
      const webhooks = make({ on: { 'post.published': handled, 'post.failed': handled } });
      await webhooks.fetch(delivery(publishedBody));
      await webhooks.fetch(delivery(failedBody));
      expect(handled).toHaveBeenCalledTimes(2);
    });

    it('claims the documented key in a custom store (function form) and skips what it already has', async () => {
      const claimed = new Set<string>();
      const claim = vi.fn(async (key: string) => !claimed.has(key) && Boolean(claimed.add(key)));
      const handled = vi.fn();
      const webhooks = make({ dedupe: claim, on: { 'post.published': handled } });
      await webhooks.fetch(delivery());
      await webhooks.fetch(delivery());
      const context = { postId: 'post_1', createdAt: Date.UTC(2024, 4, 1, 12), ttlMs: 30_000, claimId: expect.any(String) };
      expect(claim.mock.calls).toEqual([
        ['["post.published","post_1","2024-05-01T12:00:00Z"]', context],
        ['["post.published","post_1","2024-05-01T12:00:00Z"]', context],
      ]);
      expect(handled).toHaveBeenCalledOnce();
    });

    it('runs every delivery with dedupe: false', async () => {
      const handled = vi.fn();
      const webhooks = make({ dedupe: false, on: { 'post.published': handled } });
      await webhooks.fetch(delivery());
      await webhooks.fetch(delivery());
      expect(handled).toHaveBeenCalledTimes(2);
    });

    it('asks the store nothing for an event without a handler', async () => {
      const claim = vi.fn(() => true);
      const webhooks = make({ dedupe: claim, on: { 'post.failed': () => {} } });
      expect((await webhooks.fetch(delivery())).status).toBe(204);
      expect(claim).not.toHaveBeenCalled();
    });

    it('answers 500, runs nothing and reports it when the dedupe store fails', async () => {
      const onError = vi.fn();
      const handled = vi.fn();
      const webhooks = make({
        dedupe: async () => {
          throw new Error('redis down');
        },
        on: { 'post.published': handled },
        onError,
      });
      const response = await webhooks.fetch(delivery());
      expect(response.status).toBe(500);
      expect(handled).not.toHaveBeenCalled();
      expect(onError).toHaveBeenCalledWith(new Error('redis down'), expect.objectContaining({ status: 500 }));
    });
  });

  describe('failing handlers', () => {
    it('answers 500 so the service retries, reports the error with the event, and runs the retry', async () => {
      const onError = vi.fn();
      let calls = 0;
      const webhooks = make({
        onError,
        on: {
          'post.published': () => {
            calls += 1;
            if (calls === 1) throw new Error('queue unavailable');
          },
        },
      });
      const failed = await webhooks.fetch(delivery());
      expect(failed.status).toBe(500);
      expect(await failed.text()).toBe('server_error'); // the handler's message stays in the logs
      expect(onError).toHaveBeenCalledOnce();
      expect(onError.mock.calls[0]![0]).toEqual(new Error('queue unavailable'));
      expect(onError.mock.calls[0]![1]).toMatchObject({ status: 500, event: { event: 'post.published' } });

      const retried = await webhooks.fetch(delivery(publishedBody, { t: T + 30 }));
      expect(retried.status).toBe(204);
      expect(calls).toBe(2);
      expect((await webhooks.fetch(delivery())).status).toBe(204);
      expect(calls).toBe(2); // handled now: a third copy is a duplicate
    });

    it('gives the claim back to a { claim, release } store when the handler fails', async () => {
      const store = { claim: vi.fn((_key: string, _context: unknown) => true), release: vi.fn() };
      const webhooks = make({
        dedupe: store,
        on: {
          'post.published': async () => {
            throw new Error('boom');
          },
        },
      });
      expect((await webhooks.fetch(delivery())).status).toBe(500);
      expect(store.release).toHaveBeenCalledWith('["post.published","post_1","2024-05-01T12:00:00Z"]', store.claim.mock.calls[0]![1]);
    });

    it('logs 500s with console.error when no onError is given, and keeps the secret out', async () => {
      const log = vi.spyOn(console, 'error').mockImplementation(() => {});
      vi.spyOn(console, 'warn').mockImplementation(() => {}); // the 400: see the next test
      const webhooks = createWebhookHandler({
        secret: SECRET,
        now: NOW,
        on: {
          'post.published': () => {
            throw new Error('boom');
          },
        },
      });
      expect((await webhooks.fetch(delivery())).status).toBe(500);
      expect((await webhooks.fetch(delivery(publishedBody, { secret: 'whsec_forged' }))).status).toBe(400);
      expect(log).toHaveBeenCalledOnce(); // the 500, not the forged delivery
      expect(JSON.stringify(log.mock.calls.map(String))).not.toContain(SECRET);
    });

    it('without onError, warns of refused deliveries (400) once per reason per minute, through `logger` or console.warn, without the secret or the body', async () => {
      let now = NOW;
      vi.spyOn(Date, 'now').mockImplementation(() => now);
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const logged: string[] = [];
      const forged = () => delivery(publishedBody, { secret: 'whsec_forged' });
      for (const logger of [undefined, { warn: (line: string) => void logged.push(line) }]) {
        const webhooks = createWebhookHandler({ secret: SECRET, now: NOW, on: {}, ...(logger && { logger }) });
        for (let i = 0; i < 5; i++) expect((await webhooks.fetch(forged())).status).toBe(400);
        expect((await webhooks.fetch(new Request(URL_, { method: 'POST', body: publishedBody }))).status).toBe(400); // missing_signature
        now += 59_000;
        expect((await webhooks.fetch(forged())).status).toBe(400);
        now += 2_000; // a minute after the first warning
        expect((await webhooks.fetch(forged())).status).toBe(400);
        now = NOW;
      }
      const lines = [warn.mock.calls.map(([line]) => String(line)), logged];
      for (const got of lines) {
        expect(got).toHaveLength(3);
        expect(got[0]).toMatch(/^postsched webhook refused a delivery \(400 no_matching_signature\): Signature does not match the secret: .*\. No more no_matching_signature logged for a minute\.$/);
        expect(got[1]).toMatch(/\(400 missing_signature\)/);
        expect(got[2]).toMatch(/\(400 no_matching_signature\)/);
        expect(got.join('\n')).not.toContain(SECRET);
        expect(got.join('\n')).not.toContain('post_1'); // nothing of the body
      }
      expect(() => createWebhookHandler({ secret: SECRET, on: {}, logger: {} as never })).toThrow(/^`logger` must have a `warn\(message\)` method/);
    });

    it('answers the same when onError itself throws', async () => {
      const webhooks = make({
        onError: () => {
          throw new Error('logger down');
        },
        on: {
          'post.published': () => {
            throw new Error('boom');
          },
        },
      });
      expect((await webhooks.fetch(delivery())).status).toBe(500);
      expect((await webhooks.fetch(delivery(publishedBody, { secret: 'whsec_x' }))).status).toBe(400);
    });
  });

  describe('forged and broken deliveries', () => {
    it.each([
      ['no_matching_signature', 'signed with another secret', () => delivery(publishedBody, { secret: 'whsec_forged' })],
      ['no_matching_signature', 'a tampered body', () =>
        new Request(URL_, {
          method: 'POST',
          body: publishedBody.replace('post_1', 'post_2'),
          headers: { 'x-service-signature': header(SECRET, T, publishedBody) },
        })],
      ['missing_signature', 'no signature', () => new Request(URL_, { method: 'POST', body: publishedBody })],
      ['malformed_signature', 'a garbled signature', () =>
        new Request(URL_, { method: 'POST', body: publishedBody, headers: { 'x-service-signature': 'v1=zz' } })],
      ['timestamp_too_old', 'a replay an hour later', () => delivery(publishedBody, { t: T - 3600 })],
      ['invalid_json', 'a signed non-JSON body', () => delivery('not json')],
    ])('answers 400 %s to %s, runs nothing and reports it', async (reason, _, request) => {
      const onError = vi.fn();
      const handled = vi.fn();
      const webhooks = make({ onError, on: { 'post.published': handled } });
      const response = await webhooks.fetch(request());
      expect(response.status).toBe(400);
      expect(await response.text()).toBe(reason);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(handled).not.toHaveBeenCalled();
      expect(onError).toHaveBeenCalledWith(expect.any(WebhookVerificationError), { status: 400 });
      expect(onError.mock.calls[0]![0].reason).toBe(reason);
    });

    it('reads no byte of an unsigned 512 MiB body', async () => {
      let pulled = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            pulled += 65536;
            controller.enqueue(new Uint8Array(65536));
          },
        },
        { highWaterMark: 0 },
      );
      const request = new Request(URL_, { method: 'POST', body, duplex: 'half' } as RequestInit);
      const response = await make().fetch(request);
      expect(response.status).toBe(400);
      expect(await response.text()).toBe('missing_signature');
      expect(pulled).toBe(0);
    });

    it('answers 400 body_too_large past maxBodyBytes', async () => {
      const big = JSON.stringify({ event: 'post.published', created_at: 'c', data: { id: 'p', pad: 'x'.repeat(5000) } });
      const response = await make({ maxBodyBytes: 4096 }).fetch(delivery(big));
      expect(response.status).toBe(400);
      expect(await response.text()).toBe('body_too_large');
    });

    it('refuses a maxBodyBytes that is not a whole number when created', () => {
      expect(() => make({ maxBodyBytes: -1 })).toThrow(/maxBodyBytes/);
    });
  });

  describe('configuration mistakes answer 500 (the service retries once fixed)', () => {
    it('a missing, blank or padded secret throws a ValidationError when the handler is made, naming the likely cause', () => {
      for (const secret of [process.env.POSTSCHED_UNSET_SECRET as string, '', '  ', [], `${SECRET}\n`, 42 as never]) {
        expect(() => make({ secret }), JSON.stringify(secret)).toThrow(ValidationError);
        expect(() => make({ secret }), JSON.stringify(secret)).toThrow(/^`secret` is refused by createWebhookHandler\(\): Secret is (empty|not a string|padded)/);
      }
      expect(() => make({ secret: undefined as never })).toThrow(/POSTSCHED_WEBHOOK_SECRET/);
      const padded = (() => {
        try {
          make({ secret: ` ${SECRET}` });
        } catch (error) {
          return String(error);
        }
      })();
      expect(padded).toMatch(/padded/);
      expect(padded).not.toContain(SECRET); // the message never quotes it
    });

    it('a body already read by something before the handler', async () => {
      const onError = vi.fn();
      const request = delivery();
      await request.text();
      const response = await make({ onError }).fetch(request);
      expect(response.status).toBe(500);
      expect(onError.mock.calls[0]![0]).toMatchObject({ reason: 'body_not_raw' });
    });
  });

  it.each(['GET', 'PUT', 'HEAD'])('answers 405 with Allow: POST to %s', async (method) => {
    const handled = vi.fn();
    const response = await make({ on: { 'post.published': handled } }).fetch(delivery(publishedBody, { method }));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(handled).not.toHaveBeenCalled();
  });

  it('hands an event this SDK does not know to onUnknown, and drops it (204) without one', async () => {
    const unknown: UnknownWebhookEvent[] = [];
    const withHandler = make({ onUnknown: (event) => unknown.push(event) });
    expect((await withHandler.fetch(delivery(unknownBody))).status).toBe(204);
    expect(unknown).toEqual([expect.objectContaining({ event: 'unknown', originalEvent: 'post.archived' })]);
    expect((await withHandler.fetch(delivery(unknownBody))).status).toBe(204);
    expect(unknown).toHaveLength(1); // deduplicated like the others
    expect((await make().fetch(delivery(unknownBody))).status).toBe(204);
  });

  it('answers 204 to a verified event that has no handler', async () => {
    const handled = vi.fn();
    expect((await make({ on: { 'post.failed': handled } }).fetch(delivery())).status).toBe(204);
    expect(handled).not.toHaveBeenCalled();
  });
});

describe.each(backends)('webhookDedupeKey ($name)', ({ api }) => {
  it('is JSON of the event name, the post id and created_at; undefined without a string id', () => {
    const event = JSON.parse(publishedBody) as WebhookEvent;
    expect(api.webhookDedupeKey(event)).toBe('["post.published","post_1","2024-05-01T12:00:00Z"]');
    const unknown = { event: 'unknown', originalEvent: 'x.y', created_at: 'c', data: { id: 'a:b' } } as WebhookEvent;
    expect(api.webhookDedupeKey(unknown)).toBe('["x.y","a:b","c"]');
    expect(api.webhookDedupeKey({ ...unknown, data: {} } as WebhookEvent)).toBeUndefined();
  });
});

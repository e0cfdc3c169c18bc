/**
 * createWebhookHandler across retries and instances, in one process: in flight is not done (a duplicate is never
 * answered 2xx before the event's handler succeeded), claims that expire, time bounds on the handler and on
 * every dedupe-store call, and `{ stale }` for events of one post that arrive out of order. Two handlers sharing
 * one store stand for two instances; the real fleet (processes, Redis) is fleet.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { memoryDedupe, type WebhookClaimContext, type WebhookDedupeStore } from '../../src/webhooks/dedupe.js';
import { NOW, SECRET, T, backends, header } from './backends.js';

const URL_ = 'https://app.example/webhooks/postsched';

function body(event: string, createdAt: string, id: string | null = 'post_1'): string {
  const data = { ...(id === null ? {} : { id }), account_ids: ['acc_1'], published_at: createdAt };
  return JSON.stringify({ event, created_at: createdAt, data });
}
const published = body('post.published', '2024-05-01T12:05:00Z');

function delivery(text = published, t = T): Request {
  return new Request(URL_, { method: 'POST', body: text, headers: { 'x-service-signature': header(SECRET, t, text) } });
}

/** A promise and the functions that settle it, for handlers the test finishes by hand. */
function gate() {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => ((open = resolve), (fail = reject)));
  return { promise, open, fail };
}

/** Whether `promise` settles within a while (long enough for a delivery to be verified and claimed). */
const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 100));
  return done;
};

const hang = () => new Promise<never>(() => {});

describe.each(backends)('in flight, time bounds and order ($name)', ({ api }) => {
  const { createWebhookHandler, WebhookTimeoutError } = api;
  type Options = Parameters<typeof createWebhookHandler>[0];
  const make = (options: Partial<Options> = {}) =>
    createWebhookHandler({ secret: SECRET, now: NOW, on: {}, onError: () => {}, ...options });

  describe('in flight is not done', () => {
    it('answers a duplicate that arrives mid-run only once that run succeeded, and runs the handler once', async () => {
      const first = gate();
      const handled = vi.fn(() => first.promise);
      const webhooks = make({ on: { 'post.published': handled } });
      const one = webhooks.fetch(delivery());
      await vi.waitFor(() => expect(handled).toHaveBeenCalledOnce());
      const two = webhooks.fetch(delivery(published, T + 30));
      expect(await settled(two)).toBe(false); // not a 2xx while the outcome is unknown
      first.open();
      expect((await one).status).toBe(204);
      expect((await two).status).toBe(204);
      expect(handled).toHaveBeenCalledOnce();
    });

    it('runs the handler for a duplicate that arrived mid-run when that run fails: the event is not lost', async () => {
      const first = gate();
      const succeeded: string[] = [];
      let runs = 0;
      const webhooks = make({
        on: {
          'post.published': async (event) => {
            if (++runs === 1) await first.promise;
            succeeded.push(event.data.id);
          },
        },
      });
      const one = webhooks.fetch(delivery());
      await vi.waitFor(() => expect(runs).toBe(1));
      const two = webhooks.fetch(delivery(published, T + 30));
      expect(await settled(two)).toBe(false); // it reached the claim while the first run was in flight
      first.fail(new Error('queue unavailable'));
      expect((await one).status).toBe(500);
      expect((await two).status).toBe(204);
      expect(succeeded).toEqual(['post_1']);
    });

    it('answers 503 in_flight with Retry-After at another instance, and runs the retry there once the first failed', async () => {
      const store = memoryDedupe();
      const first = gate();
      const onError = vi.fn();
      let startedAtA = false;
      const a = make({ dedupe: store, on: { 'post.published': () => ((startedAtA = true), first.promise) } });
      const handledByB = vi.fn();
      const b = make({ dedupe: store, onError, on: { 'post.published': handledByB } });

      const atA = a.fetch(delivery());
      await vi.waitFor(() => expect(startedAtA).toBe(true));
      const busy = await b.fetch(delivery(published, T + 30));
      expect(busy.status).toBe(503);
      expect(await busy.text()).toBe('in_flight');
      expect(busy.headers.get('retry-after')).toBe('10'); // handlerTimeoutMs: by then the first run is over
      expect(onError).not.toHaveBeenCalled(); // expected traffic, not an error
      expect(handledByB).not.toHaveBeenCalled();

      first.fail(new Error('boom'));
      expect((await atA).status).toBe(500);
      expect((await b.fetch(delivery(published, T + 90))).status).toBe(204);
      expect(handledByB).toHaveBeenCalledOnce();
      expect((await a.fetch(delivery(published, T + 120))).status).toBe(204); // done now, for every instance
      expect(handledByB).toHaveBeenCalledOnce();
    });

    it('runs the event once the claim of an instance that died mid-handler expires (inFlightTtlMs)', async () => {
      let clock = 0;
      const store = memoryDedupe(100, () => clock);
      const key = '["post.published","post_1","2024-05-01T12:05:00Z"]';
      // The dead instance's claim: taken, never completed nor released.
      await store.claim(key, { postId: 'post_1', createdAt: undefined, ttlMs: 30_000, claimId: 'dead' });
      const handled = vi.fn();
      const webhooks = make({ dedupe: store, on: { 'post.published': handled } });
      clock = 29_999;
      expect((await webhooks.fetch(delivery())).status).toBe(503);
      clock = 30_000;
      expect((await webhooks.fetch(delivery())).status).toBe(204);
      expect(handled).toHaveBeenCalledOnce();
    });

    it('keeps a store that answers booleans working: true runs the handler, false is done', async () => {
      const seen = new Set<string>();
      const handled = vi.fn();
      const webhooks = make({ dedupe: (key) => !seen.has(key) && Boolean(seen.add(key)), on: { 'post.published': handled } });
      expect((await webhooks.fetch(delivery())).status).toBe(204);
      expect((await webhooks.fetch(delivery())).status).toBe(204);
      expect(handled).toHaveBeenCalledOnce();
    });
  });

  describe('time bounds', () => {
    const fast = { handlerTimeoutMs: 40, dedupeTimeoutMs: 20, inFlightTtlMs: 1_000 };

    it('answers 500 to a handler past its time bound, aborts its signal, reports WebhookTimeoutError, and runs the retry once that run failed', async () => {
      const onError = vi.fn();
      const signals: AbortSignal[] = [];
      const first = gate();
      let runs = 0;
      const webhooks = make({
        ...fast,
        onError,
        on: {
          'post.published': (_event, { signal }) => {
            signals.push(signal);
            if (++runs === 1) return first.promise; // ignores its signal
          },
        },
      });
      const answer = await webhooks.fetch(delivery());
      expect(answer.status).toBe(500);
      const [error, context] = onError.mock.calls[0]!;
      expect(error).toBeInstanceOf(WebhookTimeoutError);
      expect(error).toMatchObject({ reason: 'handler_timeout', code: 'handler_timeout', step: 'handler', timeoutMs: 40 });
      expect(context).toMatchObject({ status: 500, event: { event: 'post.published' } });
      expect(signals[0]!.aborted).toBe(true);
      expect(signals[0]!.reason).toBe(error);

      expect((await webhooks.fetch(delivery(published, T + 30))).status).toBe(503); // that run still goes
      first.fail(new Error('gave up after all'));
      await vi.waitFor(async () => expect((await webhooks.fetch(delivery(published, T + 60))).status).toBe(204)); // given back
      expect(runs).toBe(2);
      expect(signals[1]!.aborted).toBe(false);
    });

    it.each(['succeeds', 'fails'] as const)(
      'blocks the event of a handler that ignores its signal for inFlightTtlMs from the claim, not for the life of the process: then a retry runs it (the hung run %s later)',
      async (outcome) => {
        vi.useFakeTimers(); // as a user's tests of their app would; the store's clock is faked too
        try {
          const store = memoryDedupe();
          const started = gate();
          const first = gate();
          let runs = 0;
          let succeeded = 0;
          const on = {
            'post.published': async () => {
              if (++runs === 1) {
                started.open();
                await first.promise; // ignores its signal
              }
              succeeded += 1;
            },
          };
          const [a, b] = [make({ dedupe: store, on }), make({ dedupe: store, on })];
          const one = a.fetch(delivery());
          await started.promise;
          await vi.advanceTimersByTimeAsync(10_000); // handlerTimeoutMs
          expect((await one).status).toBe(500);
          await vi.advanceTimersByTimeAsync(19_000); // 29 s since the claim: within inFlightTtlMs (30 s)
          expect((await a.fetch(delivery(published, T + 30))).status).toBe(503);
          expect((await b.fetch(delivery(published, T + 30))).status).toBe(503);
          expect(runs).toBe(1);

          await vi.advanceTimersByTimeAsync(1_000); // inFlightTtlMs since the claim: the hung run no longer blocks it
          expect((await b.fetch(delivery(published, T + 60))).status).toBe(204);
          expect(runs).toBe(2);
          if (outcome === 'succeeds') first.open();
          else first.fail(new Error('queue down')); // its give-back must not free the event the retry completed
          await vi.advanceTimersByTimeAsync(0);
          expect((await a.fetch(delivery(published, T + 90))).status).toBe(204);
          expect(runs).toBe(2);
          expect(succeeded).toBe(outcome === 'succeeds' ? 2 : 1); // a hung run that finishes after all ran twice
        } finally {
          vi.useRealTimers();
        }
      },
    );

    it('marks the event done when a handler that overran finishes after all', async () => {
      const late = gate();
      let runs = 0;
      let finished = 0;
      const webhooks = make({
        ...fast,
        on: {
          'post.published': async () => {
            runs += 1;
            await late.promise;
            finished += 1;
          },
        },
      });
      expect((await webhooks.fetch(delivery())).status).toBe(500);
      late.open();
      await vi.waitFor(() => expect(finished).toBe(1));
      await vi.waitFor(async () => expect((await webhooks.fetch(delivery(published, T + 60))).status).toBe(204));
      expect(runs).toBe(1);
    });

    /** A memory store whose `step` hangs or throws, counting calls. */
    function faulty(step: keyof WebhookDedupeStore, fault: 'hang' | 'throw'): Required<WebhookDedupeStore> & { calls: string[] } {
      const inner = memoryDedupe();
      const calls: string[] = [];
      const wrap =
        (name: keyof WebhookDedupeStore) =>
        (key: string, context: WebhookClaimContext): unknown => {
          calls.push(name);
          if (name !== step) return inner[name](key, context);
          if (fault === 'hang') return hang();
          throw new Error(`${name} failed`);
        };
      return { calls, claim: wrap('claim') as never, complete: wrap('complete'), release: wrap('release') };
    }

    it.each(['hang', 'throw'] as const)('answers 500 and runs nothing when claim() fails (%s), and gives back a claim that may have landed', async (fault) => {
      const store = faulty('claim', fault);
      const onError = vi.fn();
      const handled = vi.fn();
      const webhooks = make({ ...fast, dedupe: store, onError, on: { 'post.published': handled } });
      expect((await webhooks.fetch(delivery())).status).toBe(500);
      expect(handled).not.toHaveBeenCalled();
      const [error, context] = onError.mock.calls[0]!;
      if (fault === 'hang') {
        expect(error).toMatchObject({ name: 'WebhookTimeoutError', reason: 'dedupe_timeout', step: 'claim', timeoutMs: 20 });
      } else {
        expect(error).toEqual(new Error('claim failed'));
      }
      await vi.waitFor(() => expect(store.calls).toEqual(['claim', 'release'])); // a claim that landed all the same is freed
      expect(context).toMatchObject({ status: 500 });
    });

    it.each(['hang', 'throw'] as const)('answers 204 when only complete() fails (%s) after the handler finished, and reports it', async (fault) => {
      const onError = vi.fn();
      const handled = vi.fn();
      const webhooks = make({ ...fast, dedupe: faulty('complete', fault), onError, on: { 'post.published': handled } });
      expect((await webhooks.fetch(delivery())).status).toBe(204);
      expect(handled).toHaveBeenCalledOnce();
      expect(onError).toHaveBeenCalledOnce();
      expect(onError.mock.calls[0]![1]).toMatchObject({ status: 204 });
      if (fault === 'hang') expect(onError.mock.calls[0]![0]).toMatchObject({ reason: 'dedupe_timeout', step: 'complete' });
    });

    it.each(['hang', 'throw'] as const)('answers 500 when the handler failed and release() fails too (%s), reporting both', async (fault) => {
      const onError = vi.fn();
      const webhooks = make({
        ...fast,
        dedupe: faulty('release', fault),
        onError,
        on: {
          'post.published': () => {
            throw new Error('handler failed');
          },
        },
      });
      expect((await webhooks.fetch(delivery())).status).toBe(500);
      expect(onError.mock.calls.map(([error]) => (error as Error).message)).toEqual([
        fault === 'hang' ? expect.stringContaining('release() took over 20 ms') : 'release failed',
        'handler failed',
      ]);
    });

    it('answers 500 to a claim() answer that is not a state', async () => {
      const onError = vi.fn();
      const webhooks = make({ dedupe: { claim: () => ({ state: 'maybe' }) as never, release: () => {} }, onError, on: { 'post.published': () => {} } });
      expect((await webhooks.fetch(delivery())).status).toBe(500);
      expect(String(onError.mock.calls[0]![0])).toMatch(/a state other than 'new', 'in-flight', 'done'/);
      expect(onError.mock.calls[0]![0]).toBeInstanceOf(ValidationError); // the store is configuration: named like an option
    });

    it('answers 500, never 204, to a claim() that answers nothing, null, 0, "" or a word (only booleans are the first form)', async () => {
      for (const answer of [undefined, null, 0, '', Number.NaN, 'yes', 1]) {
        const onError = vi.fn();
        const handled = vi.fn();
        // An async store that forgot its `return`, or one that answers a row count: not "done", not "new".
        const webhooks = make({ dedupe: { claim: async () => answer as never, release: () => {} }, onError, on: { 'post.published': handled } });
        expect((await webhooks.fetch(delivery())).status, String(answer)).toBe(500);
        expect(handled).not.toHaveBeenCalled();
        expect(String(onError.mock.calls[0]![0])).toMatch(/a state other than 'new', 'in-flight', 'done'/);
      }
    });

    it('never answers 2xx for an event whose handler did not succeed, whatever the store and the handler do', async () => {
      type Fault = 'ok' | 'hang' | 'throw';
      const fault = fc.constantFrom<Fault>('ok', 'ok', 'hang', 'throw');
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ claim: fault, complete: fault, release: fault, handler: fc.constantFrom<Fault>('ok', 'ok', 'hang', 'throw') }), {
            minLength: 1,
            maxLength: 6,
          }),
          async (plan) => {
            const inner = memoryDedupe();
            let attempt = 0;
            const faultOf = (name: 'claim' | 'complete' | 'release' | 'handler') => plan[Math.min(attempt, plan.length - 1)]![name];
            const step =
              (name: 'claim' | 'complete' | 'release') =>
              (key: string, context: WebhookClaimContext): unknown => {
                const what = faultOf(name);
                if (what === 'hang') return hang();
                if (what === 'throw') throw new Error(name);
                return inner[name](key, context);
              };
            let succeeded = 0;
            // A hung handler keeps its claim (renewed every 5 ms) while it lives: each run's end fails them.
            const hung: (() => void)[] = [];
            const webhooks = make({
              handlerTimeoutMs: 5,
              dedupeTimeoutMs: 2,
              inFlightTtlMs: 20,
              dedupe: { claim: step('claim') as never, complete: step('complete'), release: step('release') },
              on: {
                'post.published': async () => {
                  const what = faultOf('handler');
                  if (what === 'hang') return new Promise<never>((_, reject) => hung.push(() => reject(new Error('hung'))));
                  if (what === 'throw') throw new Error('handler');
                  succeeded += 1;
                },
              },
            });
            try {
              for (attempt = 0; attempt < plan.length; attempt++) {
                const { status } = await webhooks.fetch(delivery(published, T + attempt));
                if (status === 204) expect(succeeded).toBeGreaterThan(0);
                else expect([500, 503]).toContain(status);
              }
            } finally {
              for (const fail of hung) fail();
            }
          },
        ),
        { numRuns: 60 },
      );
    });

    it('refuses time bounds that cannot hold when created', () => {
      expect(() => make({ handlerTimeoutMs: 0 })).toThrow(/`handlerTimeoutMs` must be an integer from 1 to 2147483647, got 0/);
      expect(() => make({ dedupeTimeoutMs: 1.5 })).toThrow(/dedupeTimeoutMs/);
      expect(() => make({ handlerTimeoutMs: 20_000 })).toThrow(/inFlightTtlMs \(30000\) must be longer than handlerTimeoutMs \+ 2 × dedupeTimeoutMs \(30000\)/);
      // A configuration mistake like any other option's: a ValidationError that names the option and its fix.
      expect(() => make({ inFlightTtlMs: 1_000 })).toThrow(ValidationError);
      expect(() => make({ inFlightTtlMs: 1_000 })).toThrow(/^`inFlightTtlMs` is too short: .*\(20000\)\. Raise it/);
      expect(() => make({ handlerTimeoutMs: 20_000, inFlightTtlMs: 60_000 })).not.toThrow();
    });

    it('refuses a dedupe that is neither a store, a claim function nor false, as a ValidationError naming it', () => {
      for (const dedupe of [{}, 'redis', { claim: 'x' }, true]) {
        expect(() => make({ dedupe: dedupe as never })).toThrow(ValidationError);
        expect(() => make({ dedupe: dedupe as never })).toThrow(/^`dedupe` must be a store \(\{ claim, release, complete \}\), a claim function, or false\.$/);
      }
    });

    it('refuses a time bound past setTimeout’s ceiling, which would fire at once and fail every handler', () => {
      // 2^31 ms fires after 1 ms: every async handler would be answered 500 as "took over 2147483648 ms".
      expect(() => make({ handlerTimeoutMs: 2 ** 31, inFlightTtlMs: 2 ** 33 })).toThrow(/`handlerTimeoutMs` must be an integer from 1 to 2147483647, got 2147483648/);
      expect(() => make({ dedupeTimeoutMs: 2 ** 31, inFlightTtlMs: 2 ** 33 })).toThrow(/`dedupeTimeoutMs` must be an integer from 1 to 2147483647/);
      expect(() => make({ handlerTimeoutMs: 2 ** 31 - 1, inFlightTtlMs: 2 ** 33 })).not.toThrow(); // the ceiling itself
    });
  });

  describe('order per post: { stale }', () => {
    const scheduled = (createdAt: string, id: string | null = 'post_1') => body('post.scheduled', createdAt, id);

    function recorder() {
      const seen: string[] = [];
      const record = (event: { event: string; created_at: string }, { stale }: { stale: boolean }) => {
        seen.push(`${event.event} ${event.created_at}${stale ? ' stale' : ''}`);
      };
      return { seen, on: { 'post.published': record, 'post.scheduled': record, 'post.failed': record } };
    }

    it('marks a post.scheduled that arrives after the later post.published of the same post as stale, and answers 204', async () => {
      const { seen, on } = recorder();
      const webhooks = make({ on });
      expect((await webhooks.fetch(delivery(published))).status).toBe(204);
      expect((await webhooks.fetch(delivery(scheduled('2024-05-01T12:00:00Z')))).status).toBe(204);
      expect((await webhooks.fetch(delivery(scheduled('2024-05-01T12:00:00Z', 'post_2')))).status).toBe(204);
      expect(seen).toEqual([
        'post.published 2024-05-01T12:05:00Z',
        'post.scheduled 2024-05-01T12:00:00Z stale',
        'post.scheduled 2024-05-01T12:00:00Z', // another post
      ]);
    });

    it('shares the order between instances through the store', async () => {
      const store = memoryDedupe();
      const { seen, on } = recorder();
      await make({ dedupe: store, on }).fetch(delivery(published));
      await make({ dedupe: store, on }).fetch(delivery(scheduled('2024-05-01T12:04:59.999Z')));
      expect(seen[1]).toBe('post.scheduled 2024-05-01T12:04:59.999Z stale');
    });

    it('compares created_at as instants, not as strings (zones, fractions)', async () => {
      const { seen, on } = recorder();
      const webhooks = make({ on });
      await webhooks.fetch(delivery(body('post.published', '2024-05-01T14:00:00.5+02:00'))); // 12:00:00.5Z
      await webhooks.fetch(delivery(scheduled('2024-05-01T12:00:00.25Z'))); // earlier, though "12" < "14"
      await webhooks.fetch(delivery(body('post.failed', '2024-05-01T12:00:00.75Z'))); // later, though ".75Z" > ".5+"
      await webhooks.fetch(delivery(scheduled('2024-05-01T12:00:00.000001Z'))); // earlier by 0.499999 s
      await webhooks.fetch(delivery(body('post.failed', '2024-05-01T12:00:00.750001Z'))); // later by a microsecond
      expect(seen).toEqual([
        'post.published 2024-05-01T14:00:00.5+02:00',
        'post.scheduled 2024-05-01T12:00:00.25Z stale',
        'post.failed 2024-05-01T12:00:00.75Z',
        'post.scheduled 2024-05-01T12:00:00.000001Z stale',
        'post.failed 2024-05-01T12:00:00.750001Z',
      ]);
    });

    it('never marks stale, nor moves the post on, with a created_at that is not ISO 8601 with a zone', async () => {
      const { seen, on } = recorder();
      const webhooks = make({ on });
      await webhooks.fetch(delivery(body('post.published', 'tomorrow')));
      await webhooks.fetch(delivery(body('post.failed', '2024-05-01T12:00:00'))); // no zone
      await webhooks.fetch(delivery(scheduled('2024-13-01T12:00:00Z'))); // no 13th month
      await webhooks.fetch(delivery(scheduled('2024-05-01T11:00:00Z')));
      expect(seen.some((line) => line.endsWith('stale'))).toBe(false);
    });

    it('orders by no created_at later than the signature’s timestamp plus the tolerance: the post’s real events are not stale after it', async () => {
      // Signed at T (2024-05-01T14:00:00Z), toleranceSeconds 300: 14:05:00Z is the latest created_at that counts.
      for (const future of ['9999-12-31T23:59:59Z', '2030-01-01T00:00:00Z', '2024-06-01T14:00:00Z', '2024-05-01T14:05:00.001Z']) {
        const { seen, on } = recorder();
        const webhooks = make({ on });
        expect((await webhooks.fetch(delivery(body('post.failed', future)))).status).toBe(204);
        await webhooks.fetch(delivery(scheduled('2024-05-01T13:00:00Z')));
        await webhooks.fetch(delivery(published));
        expect(seen, future).toEqual([`post.failed ${future}`, 'post.scheduled 2024-05-01T13:00:00Z', 'post.published 2024-05-01T12:05:00Z stale']);
      }
      const { seen, on } = recorder();
      const webhooks = make({ on });
      await webhooks.fetch(delivery(body('post.failed', '2024-05-01T14:05:00Z'))); // at the bound: it counts
      await webhooks.fetch(delivery(scheduled('2024-05-01T13:00:00Z')));
      expect(seen[1]).toBe('post.scheduled 2024-05-01T13:00:00Z stale');
      const wide = recorder();
      const tolerant = make({ on: wide.on, toleranceSeconds: 3_600 }); // a wider tolerance moves the bound with it
      await tolerant.fetch(delivery(body('post.failed', '2024-05-01T14:59:00Z')));
      await tolerant.fetch(delivery(scheduled('2024-05-01T13:00:00Z')));
      expect(wide.seen[1]).toBe('post.scheduled 2024-05-01T13:00:00Z stale');
    });

    it('does not move the post on for a run that failed', async () => {
      const { seen, on } = recorder();
      let failures = 1;
      const webhooks = make({
        on: {
          ...on,
          'post.published': (event, context) => {
            if (failures-- > 0) throw new Error('queue down');
            on['post.published'](event, context);
          },
        },
      });
      expect((await webhooks.fetch(delivery(published))).status).toBe(500);
      await webhooks.fetch(delivery(scheduled('2024-05-01T12:00:00Z')));
      await webhooks.fetch(delivery(published, T + 60));
      expect(seen).toEqual(['post.scheduled 2024-05-01T12:00:00Z', 'post.published 2024-05-01T12:05:00Z']);
    });

    it('runs events without a data.id every time, never stale (no key to claim, as before)', async () => {
      const { seen, on } = recorder();
      const webhooks = make({ on });
      await webhooks.fetch(delivery(published));
      await webhooks.fetch(delivery(scheduled('2024-05-01T12:00:00Z', null)));
      await webhooks.fetch(delivery(scheduled('2024-05-01T12:00:00Z', null)));
      expect(seen).toEqual(['post.published 2024-05-01T12:05:00Z', 'post.scheduled 2024-05-01T12:00:00Z', 'post.scheduled 2024-05-01T12:00:00Z']);
    });
  });
});

describe('the in-memory default store', () => {
  const context = (claimId: string, createdAt?: number, postId = 'post_1'): WebhookClaimContext => ({ postId, createdAt, ttlMs: 1_000, claimId });

  it('goes new → in-flight → done, and back to new on release by the holder only', () => {
    const store = memoryDedupe();
    expect(store.claim('k', context('a'))).toEqual({ state: 'new', stale: false });
    expect(store.claim('k', context('b'))).toBe('in-flight');
    store.release('k', context('b')); // not the holder: nothing given back
    expect(store.claim('k', context('b'))).toBe('in-flight');
    store.release('k', context('a'));
    expect(store.claim('k', context('c'))).toEqual({ state: 'new', stale: false });
    store.complete('k', context('c'));
    store.release('k', context('c')); // a late release does not undo done
    expect(store.claim('k', context('d'))).toBe('done');
  });

  it('renews a claim for its holder (the same claim id) when claimed again; anyone else still finds it in flight', () => {
    let clock = 0;
    const store = memoryDedupe(100, () => clock);
    expect(store.claim('k', context('a'))).toEqual({ state: 'new', stale: false }); // until 1 000
    clock = 900;
    expect(store.claim('k', context('a'))).toEqual({ state: 'new', stale: false }); // until 1 900
    clock = 1_500;
    expect(store.claim('k', context('b'))).toBe('in-flight');
    clock = 1_900;
    expect(store.claim('k', context('b'))).toEqual({ state: 'new', stale: false }); // expired at last
    store.complete('k', context('b'));
    expect(store.claim('k', context('b'))).toBe('done'); // a renewal never undoes done
  });

  it('stays bounded: past maxKeys the oldest events and posts are forgotten', () => {
    const store = memoryDedupe(3);
    for (const key of ['a', 'b', 'c', 'd']) store.complete(key, context('x', 10, `post_${key}`));
    expect(store.claim('a', context('y'))).toEqual({ state: 'new', stale: false }); // forgotten
    expect(store.claim('d', context('y'))).toBe('done');
    expect(store.claim('e', context('y', 5, 'post_a'))).toEqual({ state: 'new', stale: false }); // post_a forgotten too
    expect(store.claim('f', context('y', 5, 'post_d'))).toEqual({ state: 'new', stale: true });
  });
});


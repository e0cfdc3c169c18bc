/**
 * What every shared webhook dedupe store guarantees, run against each real one (RedisWebhookDedupe on Redis and a
 * Redis Cluster, PostgresWebhookDedupe on PostgreSQL): each transition, its expiry, the newest created_at per post,
 * atomic claims; and, through createWebhookHandler at two instances, a hung handler that blocks its event for
 * inFlightTtlMs only. Called inside a describe by test/redis/webhook-dedupe.test.ts and
 * test/postgres/webhook-dedupe.test.ts.
 */
import { expect, it, vi } from 'vitest';
import { createWebhookHandler, signWebhook, type WebhookClaim, type WebhookClaimContext, type WebhookDedupeStore, type WebhookHandler } from '@postsched/sdk/webhooks';

export const KEY = '["post.published","post_1","2024-05-01T12:05:00Z"]';
export const SECRET = 'whsec_dedupe_contract';
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function context(claimId: string, createdAt: number | undefined = 1_000, postId = 'post_1', ttlMs = 10_000): WebhookClaimContext {
  return { postId, createdAt, ttlMs, claimId };
}

/** A fresh store, alone on its server (its own prefix or table); `doneTtlMs` as given. */
export type MakeStore = (options?: { doneTtlMs?: number }) => Promise<SharedStore>;

/** What RedisWebhookDedupe and PostgresWebhookDedupe are: a store whose claim answers a `WebhookClaim`. */
export interface SharedStore extends Required<WebhookDedupeStore> {
  claim(key: string, context: WebhookClaimContext): Promise<WebhookClaim>;
}

/** A signed delivery of `event` for `postId`, created at `createdAt`. */
export async function signed(event: string, createdAt: string, postId = 'post_1'): Promise<Request> {
  const text = JSON.stringify({ event, created_at: createdAt, data: { id: postId, account_ids: ['acc_1'], published_at: createdAt } });
  const signature = await signWebhook({ body: text, secret: SECRET });
  return new Request('http://127.0.0.1/webhooks', { method: 'POST', body: text, headers: { 'x-service-signature': signature } });
}

/**
 * The store's transitions, the same on every store. `ordered`: calls made together are answered in the order made
 * (RedisWebhookDedupe's batches); otherwise only one claim of each event is new, whichever.
 */
export function transitions(store: MakeStore, { ordered }: { ordered: boolean }): void {
  it('goes new → in-flight → done; release gives back only the holder’s claim, never a done mark', async () => {
    const dedupe = await store();
    expect(await dedupe.claim(KEY, context('a'))).toEqual({ state: 'new' });
    expect(await dedupe.claim(KEY, context('b'))).toEqual({ state: 'in-flight' });
    await dedupe.release(KEY, context('b')); // not the holder
    expect(await dedupe.claim(KEY, context('b'))).toEqual({ state: 'in-flight' });
    await dedupe.release(KEY, context('a'));
    expect(await dedupe.claim(KEY, context('c'))).toEqual({ state: 'new' });
    await dedupe.complete(KEY, context('c'));
    await dedupe.release(KEY, context('c'));
    expect(await dedupe.claim(KEY, context('d'))).toEqual({ state: 'done' });
  });

  it('renews a claim for its holder (the same claim id) for the new ttl; anyone else finds it in flight, its holder done once done', async () => {
    const dedupe = await store();
    expect(await dedupe.claim(KEY, context('a', 1_000, 'post_1', 150))).toEqual({ state: 'new' });
    expect(await dedupe.claim(KEY, context('a', 1_000, 'post_1', 60_000))).toEqual({ state: 'new' });
    await sleep(300); // past the first ttl
    expect(await dedupe.claim(KEY, context('b'))).toEqual({ state: 'in-flight' });
    await dedupe.complete(KEY, context('a'));
    expect(await dedupe.claim(KEY, context('a'))).toEqual({ state: 'done' });
  });

  it('expires a claim whose holder died after its ttlMs, and a done mark after doneTtlMs', async () => {
    const dedupe = await store({ doneTtlMs: 150 });
    await dedupe.claim(KEY, context('dead', 1_000, 'post_1', 150));
    expect(await dedupe.claim(KEY, context('b'))).toEqual({ state: 'in-flight' });
    await sleep(300);
    expect(await dedupe.claim(KEY, context('c'))).toEqual({ state: 'new' });
    await dedupe.complete(KEY, context('c'));
    expect(await dedupe.claim(KEY, context('d'))).toEqual({ state: 'done' });
    await sleep(300);
    expect(await dedupe.claim(KEY, context('e'))).toEqual({ state: 'new' });
  });

  it('keeps the newest created_at handled per post: a later-handled older event is stale, the newest never moves down', async () => {
    const dedupe = await store();
    const event = (name: string) => `["${name}","post_1"]`;
    await dedupe.claim(event('published'), context('a', 2_000.5));
    expect(await dedupe.claim(event('scheduled'), context('b', 1_000))).toEqual({ state: 'new' }); // published not done yet
    await dedupe.complete(event('published'), context('a', 2_000.5));
    expect(await dedupe.claim(event('failed'), context('c', 2_000.25))).toEqual({ state: 'new', stale: true });
    await dedupe.complete(event('failed'), context('c', 2_000.25)); // older: the newest stays 2000.5
    expect(await dedupe.claim(event('deleted'), context('d', 2_000.375))).toEqual({ state: 'new', stale: true });
    expect(await dedupe.claim(event('x'), context('e', 2_000.5))).toEqual({ state: 'new' }); // the same instant is not later
    expect(await dedupe.claim(event('y'), { ...context('f'), createdAt: undefined })).toEqual({ state: 'new' }); // no instant: never stale
    expect(await dedupe.claim(event('z'), context('g', 1, 'post_2'))).toEqual({ state: 'new' }); // another post
  });

  it(`answers each of 100 concurrent calls on 25 events of 5 posts for its own event${ordered ? ' (calls made together go as one script)' : ''}`, async () => {
    const dedupe = await store();
    const calls = Array.from({ length: 100 }, (_, i) => ({ key: `["e",${i % 25}]`, context: context(`c${i}`, i % 25, `post_${i % 5}`) }));
    const first = await Promise.all(calls.map(({ key, context }) => dedupe.claim(key, context)));
    if (ordered) {
      expect(first.slice(0, 25).map((a) => a.state)).toEqual(Array(25).fill('new'));
      expect(first.slice(25).map((a) => a.state)).toEqual(Array(75).fill('in-flight'));
    }
    // One new claim per event, the other three in flight.
    const holders = calls.filter((_, i) => first[i]!.state === 'new');
    expect(holders.map(({ key }) => key).sort()).toEqual(calls.slice(0, 25).map(({ key }) => key).sort());
    expect(first.filter((a) => a.state === 'in-flight')).toHaveLength(75);
    await Promise.all(holders.map(({ key, context }) => dedupe.complete(key, context)));
    const again = await Promise.all(calls.map(({ key, context }) => dedupe.claim(key, { ...context, claimId: 'late' })));
    expect(again.map((a) => a.state)).toEqual(Array(100).fill('done'));
    // post_4's newest handled created_at is 24 (its events: 4, 9, 14, 19, 24): one created at 19 is stale.
    expect(await dedupe.claim('["old"]', context('o', 19, 'post_4'))).toEqual({ state: 'new', stale: true });
    expect(await dedupe.claim('["new"]', context('n', 24, 'post_4'))).toEqual({ state: 'new' });
  });

  it('gives one claim of an event to exactly one of 50 concurrent callers', async () => {
    const dedupe = await store();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => dedupe.claim(KEY, context(`c${i}`))));
    expect(answers.filter((a) => a.state === 'new')).toHaveLength(1);
    expect(answers.filter((a) => a.state === 'in-flight')).toHaveLength(49);
  });
}

/**
 * A handler that ignores its signal at one instance of two sharing a store: the event is blocked (503 at both) only
 * until inFlightTtlMs has passed since its claim, then a retry runs it; the hung run's late outcome frees nothing.
 * Counted: runs and answers, never a duration (the retries go on until one is answered 204, at most 200).
 */
export function hungHandler(store: () => Promise<WebhookDedupeStore>): void {
  it.each(['succeeds', 'fails'] as const)(
    'runs the event again once inFlightTtlMs has passed since the claim of a handler that hangs at one instance; until then 503 at both (the hung run %s later)',
    async (outcome) => {
      const bounds = { handlerTimeoutMs: 200, dedupeTimeoutMs: 1_000, inFlightTtlMs: 2_500 };
      const dedupe = await store();
      let release!: (error?: Error) => void;
      const first = new Promise<void>((resolve, reject) => (release = (error) => (error ? reject(error) : resolve())));
      let runs = 0;
      let succeeded = 0;
      const on = {
        'post.published': async () => {
          if (++runs === 1) await first; // ignores its signal
          succeeded += 1;
        },
      };
      // Two instances on the one store.
      const [a, b] = [0, 1].map(() => createWebhookHandler({ ...bounds, secret: SECRET, onError: () => {}, on, dedupe })) as [WebhookHandler, WebhookHandler];
      const event = () => signed('post.published', '2024-05-01T12:05:00Z');
      expect((await a.fetch(await event())).status).toBe(500);
      const statuses: number[] = [];
      while (statuses.at(-1) !== 204 && statuses.length < 200) {
        statuses.push((await [a, b][statuses.length % 2]!.fetch(await event())).status);
        if (statuses.at(-1) !== 204) await sleep(50);
      }
      expect(statuses.at(-1)).toBe(204); // before the fix: 503 for as long as the hung run lives
      expect(new Set(statuses.slice(0, -1))).toEqual(new Set([503]));
      expect(runs).toBe(2);

      release(outcome === 'succeeds' ? undefined : new Error('queue down'));
      await vi.waitFor(() => expect(succeeded).toBe(outcome === 'succeeds' ? 2 : 1));
      await sleep(100); // the hung run's done mark or give-back lands
      for (const instance of [a, b]) expect((await instance.fetch(await event())).status).toBe(204);
      expect(runs).toBe(2);
    },
  );
}

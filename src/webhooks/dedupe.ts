/** Duplicate deliveries: the key that identifies an event across retries, and the in-memory default store. */
import type { WebhookEvent } from './event.js';

/**
 * Where `createWebhookHandler` remembers the events it has handled, so a retried delivery runs its handler once.
 *
 * - A function `(key) => Promise<boolean>`: claims `key` and says whether it was new (`true`: run the handler;
 *   `false`: a duplicate, answered 2xx without running it). Redis: `SET key 1 NX EX <seconds>` returns `OK`
 *   only the first time. A claim is never given back, so if the handler then fails (answer 500), the service's
 *   retry counts as a duplicate: prefer the object form when a handler can fail.
 * - `{ claim, release }`: the same `claim`, and `release(key)` called when the handler failed, so the retry runs
 *   it again (Redis: `DEL key`).
 *
 * @example
 * dedupe: {
 *   claim: async (key) => (await redis.set(`postsched:webhook:${key}`, '1', 'EX', 7 * 86_400, 'NX')) === 'OK',
 *   release: (key) => redis.del(`postsched:webhook:${key}`),
 * }
 */
export type WebhookDedupe =
  | ((key: string) => boolean | Promise<boolean>)
  | {
      /** Claims `key`: `true` the first time (run the handler), `false` if it was already claimed (skip). */
      claim(key: string): boolean | Promise<boolean>;
      /** Gives a claim back after its handler failed, so the service's retry runs the handler again. */
      release(key: string): unknown;
    };

/**
 * The dedupe key of an event: `JSON.stringify([event name, data.id, created_at])`, for example
 * `["post.published","post_42","<created_at>"]`; `undefined` when `data.id` is not a string (such
 * an event is never treated as a duplicate).
 *
 * Why these fields and not the signature's `t` and `v1`: a retry may be signed anew (a new timestamp, so a new
 * `v1`), but it is the same event, with the same name, post and time (service spec §6); two different events
 * of one post differ in name or `created_at`. JSON keeps the three parts apart whatever characters they hold.
 *
 * @example
 * webhookDedupeKey(event) // '["post.published","post_42","<created_at>"]'
 */
export function webhookDedupeKey(event: WebhookEvent): string | undefined {
  const id = event.data.id;
  if (typeof id !== 'string') return undefined;
  return JSON.stringify([event.event === 'unknown' ? event.originalEvent : event.event, id, event.created_at]);
}

/** Keys remembered by the in-memory default: enough for days of one endpoint's traffic, a few MB at most. */
export const MEMORY_DEDUPE_KEYS = 10_000;

/** The default store: this process's memory, the last `MEMORY_DEDUPE_KEYS` keys (oldest forgotten first). */
export function memoryDedupe(maxKeys = MEMORY_DEDUPE_KEYS): Exclude<WebhookDedupe, Function> {
  const keys = new Set<string>();
  return {
    claim(key) {
      if (keys.has(key)) return false;
      if (keys.size >= maxKeys) keys.delete(keys.values().next().value!);
      keys.add(key);
      return true;
    },
    release(key) {
      keys.delete(key);
    },
  };
}

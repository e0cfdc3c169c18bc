/**
 * Duplicate and out-of-order deliveries: the key that identifies an event across retries, the contract of a dedupe
 * store (claim → new / in-flight / done, complete, release, with expiries, and the newest `created_at` handled per
 * post), the in-memory default store, and the part of `createWebhookHandler` that makes an event's handler succeed
 * once across a fleet: claim the event in the dedupe store, run the handler within `handlerTimeoutMs`, then mark it
 * done or give the claim back. In flight is not done (assumptions.md "Webhook retries, time-outs, expected status"):
 * a duplicate that arrives while the event is being handled gets a retryable 503, never a 2xx, so a first run that
 * then fails is retried.
 */
import { parseDateTime } from '../core/date-time.js';
import { invalidOption } from '../core/invalid-option.js';
import { timeBound } from '../core/time-bound.js';
import { checkWellFormedId } from '../core/well-formed-id.js';
import { WebhookTimeoutError, type WebhookTimedStep } from './errors.js';
import type { WebhookEvent } from './event.js';

/** What a store knows of an event's key: never seen (or given back), being handled right now, or handled. */
export type WebhookClaimState = 'new' | 'in-flight' | 'done';

/** The answer of `claim()` in full. */
export interface WebhookClaim {
  /** `new`: the claim is yours, run the handler. `in-flight`: another delivery holds it. `done`: handled already. */
  state: WebhookClaimState;
  /**
   * With `new`: an event of the same post with a later `created_at` was already handled (`complete`d), so this
   * one is late. The handler still runs, with `{ stale: true }`.
   */
  stale?: boolean | undefined;
}

/**
 * What `claim()` may answer: a `WebhookClaim`, its `state` alone, or (the first form of this contract) a boolean:
 * `true` for `new`, `false` for `done`. A store that answers booleans cannot say "in flight": within one process
 * the handler still waits for a run in progress, but across processes a duplicate is then answered 2xx.
 */
export type WebhookClaimResult = boolean | WebhookClaimState | WebhookClaim;

/** What `createWebhookHandler` tells the store beside the key, on every call. */
export interface WebhookClaimContext {
  /** The post the event is about (`data.id`). Events of one post share it: put it in a Redis Cluster hash tag. */
  readonly postId: string;
  /**
   * The event's `created_at` as an instant: milliseconds since the Unix epoch, sub-millisecond digits kept as a
   * fraction. `undefined` when it is not an ISO 8601 time with a zone, or when it is later than the signature's
   * timestamp plus `toleranceSeconds` (an event is signed after it happened): such an event is never stale and moves
   * nothing forward.
   */
  readonly createdAt: number | undefined;
  /**
   * How long a claim in flight lasts (`inFlightTtlMs`): if its holder dies (SIGKILL, a lost instance), the claim
   * expires then and the service's next retry runs the handler. The claim is not renewed while a handler runs past
   * `handlerTimeoutMs`: once `ttlMs` has passed, a retry runs the handler again, even beside a run that hangs.
   */
  readonly ttlMs: number;
  /** A random id of this attempt: `release` gives the claim back only while it still holds this id. */
  readonly claimId: string;
}

/**
 * A dedupe store: where a fleet of receivers agrees on which events are being handled and which are done.
 * Each method may return a promise; each call is bounded by `dedupeTimeoutMs`.
 *
 * - `claim(key, context)`: atomically, if `key` is unknown, its claim expired, or its claim holds
 *   `context.claimId` (a renewal), take it for `context.ttlMs` and
 *   answer `new` (with `stale`); else answer `in-flight` or `done`.
 * - `complete(key, context)`: the handler succeeded: mark `key` done (keep it as long as the service may retry),
 *   and move the post's newest handled `created_at` up to `context.createdAt`. Optional: without it a claim
 *   never expires and is the done mark itself (the first form of this contract).
 * - `release(key, context)`: the handler failed: forget the claim if it still holds `context.claimId`, so the
 *   retry runs the handler.
 *
 * `RedisWebhookDedupe` (`@postsched/sdk/redis`) implements it for a fleet; the default is in memory.
 *
 * @example
 * // A store on a SQL table with a unique key (PostgreSQL), `created_at` ordering left out.
 * const dedupe: WebhookDedupeStore = {
 *   async claim(key, { claimId, ttlMs }) {
 *     const row = await sql`INSERT INTO webhook_events (key, claim_id, expires_at)
 *       VALUES (${key}, ${claimId}, now() + ${ttlMs} * interval '1 ms')
 *       ON CONFLICT (key) DO UPDATE SET claim_id = EXCLUDED.claim_id, expires_at = EXCLUDED.expires_at
 *         WHERE webhook_events.done = false
 *           AND (webhook_events.expires_at < now() OR webhook_events.claim_id = EXCLUDED.claim_id)
 *       RETURNING claim_id`
 *     if (row.length > 0) return 'new'
 *     const [{ done }] = await sql`SELECT done FROM webhook_events WHERE key = ${key}`
 *     return done ? 'done' : 'in-flight'
 *   },
 *   complete: (key) => sql`UPDATE webhook_events SET done = true WHERE key = ${key}`,
 *   release: (key, { claimId }) => sql`DELETE FROM webhook_events WHERE key = ${key} AND claim_id = ${claimId} AND NOT done`,
 * }
 */
export interface WebhookDedupeStore {
  /**
   * Claims `key` (or renews the claim holding `context.claimId`): `new` (run the handler), `in-flight` (another
   * delivery is running it) or `done`.
   */
  claim(key: string, context: WebhookClaimContext): WebhookClaimResult | Promise<WebhookClaimResult>;
  /** Gives a claim back after its handler failed, so the service's retry runs the handler again. */
  release(key: string, context: WebhookClaimContext): unknown;
  /** Marks `key` handled and records `context.createdAt` as the post's newest handled time when it is later. */
  complete?(key: string, context: WebhookClaimContext): unknown;
}

/**
 * Where `createWebhookHandler` remembers the events it is handling and has handled, so that an event's handler
 * succeeds once however often, wherever and in whatever order the service delivers it.
 *
 * - `new RedisWebhookDedupe({ redis })` from `@postsched/sdk/redis`: for several processes or instances.
 * - `new PostgresWebhookDedupe({ pool })` from `@postsched/sdk/postgres`: the same, on PostgreSQL.
 * - A `WebhookDedupeStore` of your own (`{ claim, release, complete }`, see there).
 * - A function `(key, context) => WebhookClaimResult`: a `claim` alone, never given back: if the handler then
 *   fails (answer 500), the retry is answered as a duplicate. Prefer a store.
 *
 * @example
 * import { RedisWebhookDedupe } from '@postsched/sdk/redis'
 * createWebhookHandler({ secret, on, dedupe: new RedisWebhookDedupe({ redis }) })
 */
export type WebhookDedupe =
  | ((key: string, context: WebhookClaimContext) => WebhookClaimResult | Promise<WebhookClaimResult>)
  | WebhookDedupeStore;

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

/**
 * `created_at` as an instant (ms since the epoch, sub-millisecond digits as a fraction), so `…T12:00:00+02:00`
 * comes before `…T11:00:00Z` and `.5Z` after `.25Z`, which string order gets wrong; `undefined` unless ISO 8601
 * with a zone (a time without one is local to an unknown place), and when later than `notAfter`: an event is
 * signed after it happened, so one dated past its signature (and the clocks' tolerance) would mark the post's real
 * events stale.
 */
export function instantOf(createdAt: string, notAfter = Infinity): number | undefined {
  // ISO 8601 date-time with a zone (RFC 3339 §5.6, plus a comma decimal sign and a zone without colon).
  const instant = parseDateTime(createdAt, true);
  return instant === undefined || instant > notAfter ? undefined : instant;
}

/** Keys remembered by the in-memory default: enough for days of one endpoint's traffic, a few MB at most. */
export const MEMORY_DEDUPE_KEYS = 10_000;

/**
 * The default store: this process's memory, the same states as a shared store (a claim in flight expires after
 * `ttlMs`), at most `maxKeys` events and `maxKeys` posts (the oldest forgotten first).
 */
export function memoryDedupe(maxKeys = MEMORY_DEDUPE_KEYS, now = Date.now): Required<WebhookDedupeStore> {
  /** key → the claim holding it (with its expiry), or `undefined` once done. */
  const events = new Map<string, { claimId: string; until: number } | undefined>();
  /** post id → the newest `created_at` handled. */
  const newest = new Map<string, number>();
  const remember = <V>(map: Map<string, V>, key: string, value: V) => {
    map.delete(key); // re-inserted last: the oldest entry is the first one
    if (map.size >= maxKeys) map.delete(map.keys().next().value!);
    map.set(key, value);
  };
  return {
    claim(key, { postId, createdAt, ttlMs, claimId }) {
      checkWellFormedId(key, 'key');
      checkWellFormedId(postId, 'postId', ['context', 'postId']);
      if (events.has(key)) {
        const claim = events.get(key);
        if (claim === undefined) return 'done';
        if (claim.until > now() && claim.claimId !== claimId) return 'in-flight';
      }
      remember(events, key, { claimId, until: now() + ttlMs });
      const latest = newest.get(postId);
      return { state: 'new', stale: latest !== undefined && createdAt !== undefined && latest > createdAt };
    },
    complete(key, { postId, createdAt }) {
      remember(events, key, undefined);
      if (createdAt !== undefined && !(newest.get(postId)! >= createdAt)) remember(newest, postId, createdAt);
    },
    release(key, { claimId }) {
      if (events.get(key)?.claimId === claimId) events.delete(key);
    },
  };
}

// Handling an event once: claim, run the handler in its time, then complete or release (or, past its time, keep
// the claim until the run settles).

/** What every handler gets beside its event. */
export interface WebhookHandlerContext {
  /**
   * `true` when an event of the same post (`data.id`) with a later `created_at` was already handled: this one
   * arrived late (a retry, another instance). Skip the state change it would make, and return: it is answered
   * 2xx like any other. Always `false` for an event without a string `data.id` or an ISO 8601 `created_at`, and
   * for one whose `created_at` is later than its signature's timestamp plus `toleranceSeconds` (such an event does
   * not move its post on either).
   */
  readonly stale: boolean;
  /**
   * Aborted when the handler runs past `handlerTimeoutMs` (the delivery is then answered 500): stop there. Its event
   * stays claimed until the handler settles or `inFlightTtlMs` has passed since the claim, whichever comes first:
   * retries are answered 503 meanwhile, and after that a retry runs the handler again, even beside this run.
   */
  readonly signal: AbortSignal;
}

/** A handler as the core runs it, whatever event it is typed for. */
export type RunHandler = (event: WebhookEvent, context: WebhookHandlerContext) => unknown;

/** The store and the time bounds, as `createWebhookHandler` read them from its options. */
export interface OnceOptions {
  /** The store to call (see `toStore`), or `undefined` for `dedupe: false`. */
  readonly store: ClaimStore | undefined;
  readonly handlerTimeoutMs: number;
  readonly dedupeTimeoutMs: number;
  readonly inFlightTtlMs: number;
}

/** How many runs of the same event in this process a delivery waits for before answering 503 instead. */
const MAX_LOCAL_WAITS = 2;

/**
 * Returns `once(event, run, latest)`: handles a verified event, its handler run at most once at a time, and resolves
 * `true` once it is handled (now, before, or it has no key), `false` while another delivery of it is in flight;
 * `latest` (ms) is the latest `created_at` its signature allows, past which it is not used for ordering. `report`
 * hears of the failures no answer waits for: a claim not given back (500), a done mark not set (204).
 */
export function handleOnce(
  { store, handlerTimeoutMs, dedupeTimeoutMs, inFlightTtlMs }: OnceOptions,
  report: (error: unknown, context: { status: 204 | 500; event: WebhookEvent }) => Promise<void>,
): (event: WebhookEvent, run: RunHandler, latest: number) => Promise<boolean> {
  /**
   * Events being handled in this process, by key. A duplicate here waits for the outcome instead of a 503; the
   * promise it waits on is made only then, so a delivery without duplicates allocates none.
   */
  const running = new Map<string, { done?: Promise<void>; settle?: () => void }>();

  const call = <T>(step: WebhookTimedStep, work: () => T) =>
    timeBound(work, dedupeTimeoutMs, () => new WebhookTimeoutError(step, dedupeTimeoutMs));
  /** A store call whose outcome no answer waits for (a give-back after a failed claim, a late done mark). */
  const quietly = async (step: WebhookTimedStep, work: () => unknown): Promise<void> => {
    try {
      await call(step, work);
    } catch {
      // Nobody to tell: the delivery was answered already, or is answered 500 for another reason.
    }
  };

  /**
   * Runs the handler within `handlerTimeoutMs`. Past it, aborts its signal (made only when the handler reads it)
   * and hands the run, which goes on (JavaScript cannot stop it), to `overran`.
   */
  async function run(event: WebhookEvent, handler: RunHandler, stale: boolean, overran?: (work: PromiseLike<unknown>) => void): Promise<void> {
    let controller: AbortController | undefined;
    let work: unknown;
    let timedOut = false;
    const context: WebhookHandlerContext = {
      stale,
      get signal() {
        return (controller ??= new AbortController()).signal;
      },
    };
    try {
      await timeBound(
        () => (work = handler(event, context)),
        handlerTimeoutMs,
        () => ((timedOut = true), new WebhookTimeoutError('handler', handlerTimeoutMs)),
      );
    } catch (error) {
      if (timedOut) {
        (controller ??= new AbortController()).abort(error);
        overran?.(work as PromiseLike<unknown>);
      }
      throw error;
    }
  }

  /**
   * A run past its time bound keeps its claim for the rest of `inFlightTtlMs`, never longer: a hung run must not block
   * its event for the life of the process, so once the claim expires a retry runs the handler (beside this run, if it
   * is still going). Settled, the event is marked done, or given back when the run failed (only while the claim is
   * still its own), so a retry runs it.
   */
  async function outlive(work: PromiseLike<unknown>, key: string, context: WebhookClaimContext): Promise<void> {
    const step = await Promise.resolve(work).then(() => 'complete' as const, () => 'release' as const);
    await quietly(step, () => store![step]?.(key, context));
  }

  /** Gives the claim back (the handler failed): the service's retry then runs the handler. */
  async function giveBack(key: string, context: WebhookClaimContext, event: WebhookEvent): Promise<void> {
    if (store?.release === undefined) return;
    try {
      await call('release', () => store.release!(key, context));
    } catch (error) {
      // The claim stays until it expires (inFlightTtlMs); until then retries are answered 503.
      await report(error, { status: 500, event });
    }
  }

  return async function once(event, handler, latest) {
    const key = store === undefined ? undefined : webhookDedupeKey(event);
    if (key === undefined) {
      await run(event, handler, false);
      return true;
    }
    for (let waits = 0, entry = running.get(key); entry !== undefined && waits < MAX_LOCAL_WAITS; waits++, entry = running.get(key)) {
      await (entry.done ??= new Promise((resolve) => (entry!.settle = resolve)));
    }
    if (running.has(key)) return false;
    const entry: { done?: Promise<void>; settle?: () => void } = {};
    running.set(key, entry);
    const context: WebhookClaimContext = {
      postId: event.data.id as string,
      createdAt: instantOf(event.created_at, latest),
      ttlMs: inFlightTtlMs,
      claimId: crypto.randomUUID(),
    };
    try {
      let claim: WebhookClaim;
      try {
        claim = toClaim(await call('claim', () => store!.claim(key, context)));
      } catch (error) {
        // A claim that landed all the same (after a time-out) would block the event until it expires: take it back.
        quietly('release', () => store!.release?.(key, context));
        throw error;
      }
      if (claim.state !== 'new') return claim.state === 'done';
      let overran: PromiseLike<unknown> | undefined;
      try {
        await run(event, handler, claim.stale === true, (work) => (overran = work));
      } catch (error) {
        if (overran === undefined) await giveBack(key, context, event);
        else void outlive(overran, key, context); // answered 500 now; the run keeps its claim until it settles
        throw error;
      }
      try {
        await call('complete', () => store!.complete?.(key, context));
      } catch (error) {
        // Handled, so 2xx; not marked done, so its claim expires and a duplicate after that may run it again.
        await report(error, { status: 204, event });
      }
      return true;
    } finally {
      running.delete(key);
      entry.settle?.();
    }
  };
}

/** A store as `handleOnce` calls it: a claim function alone is a store without `release` and `complete`. */
export type ClaimStore = Partial<WebhookDedupeStore> & Pick<WebhookDedupeStore, 'claim'>;

/** The `dedupe` option as the store to call, or `undefined` for `dedupe: false`. Methods are called on the store (`this` kept). */
export function toStore(dedupe: WebhookDedupe | false | undefined): ClaimStore | undefined {
  if (dedupe === false) return undefined;
  if (dedupe === undefined) return memoryDedupe();
  if (typeof dedupe === 'function') return { claim: dedupe };
  if (typeof dedupe?.claim !== 'function') {
    invalidOption('dedupe', 'must be a store ({ claim, release, complete }), a claim function, or false.');
  }
  return dedupe;
}

const STATES: readonly unknown[] = ['new', 'in-flight', 'done'];

/**
 * What `claim()` answered, as a `WebhookClaim`; a boolean (the first form of the contract): `true` new, `false` done.
 * Booleans only: `undefined` (a store that forgot its `return`) taken as done would answer 2xx for an unhandled event.
 */
function toClaim(result: unknown): WebhookClaim {
  const claim = typeof result === 'object' && result !== null ? (result as WebhookClaim) : { state: result };
  if (STATES.includes(claim.state)) return claim as WebhookClaim;
  if (typeof result === 'boolean') return { state: result ? 'new' : 'done' };
  return invalidOption('dedupe', "claim() answered a state other than 'new', 'in-flight', 'done'.");
}

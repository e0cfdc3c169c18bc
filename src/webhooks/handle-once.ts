/**
 * The part of `createWebhookHandler` that makes an event's handler succeed once across a fleet: claim the event
 * in the dedupe store, run the handler within `handlerTimeoutMs`, then mark it done or give the claim back.
 * In flight is not done (assumptions.md "Webhook retries, time-outs, expected status"): a duplicate that arrives
 * while the event is being handled gets a retryable 503, never a 2xx, so a first run that then fails is retried.
 */
import { PostSchedError } from '../base-error.js';
import { integerOption, invalidOption, MAX_TIMEOUT_MS } from '../invalid-option.js';
import {
  instantOf,
  memoryDedupe,
  webhookDedupeKey,
  type WebhookClaim,
  type WebhookClaimContext,
  type WebhookDedupe,
  type WebhookDedupeStore,
} from './dedupe.js';
import type { WebhookEvent } from './event.js';
import type { Answer, WebhookErrorContext, WebhookHandlerContext } from './handler.js';
import { timeBound } from './time-bound.js';
import { WebhookTimeoutError, type WebhookTimedStep } from './errors.js';

/** The time bounds and the store, as `WebhookHandlerOptions` gives them. */
export interface HandleOnceOptions {
  dedupe?: WebhookDedupe | false | undefined;
  handlerTimeoutMs?: number | undefined;
  inFlightTtlMs?: number | undefined;
  dedupeTimeoutMs?: number | undefined;
}

/** A handler as the core runs it, whatever event it is typed for. */
export type RunHandler = (event: WebhookEvent, context: WebhookHandlerContext) => unknown;

/** Under the time-outs of common senders (GitHub 10 s, Shopify 5 s, Stripe 20 s): our 500 comes first. */
export const DEFAULT_HANDLER_TIMEOUT_MS = 10_000;
/** Each dedupe store call; a store slower than this is down for webhook purposes. */
export const DEFAULT_DEDUPE_TIMEOUT_MS = 5_000;
/** Above a handler's whole time (10 s) plus its two store calls (2 × 5 s), so a live holder never loses its claim. */
export const DEFAULT_IN_FLIGHT_TTL_MS = 30_000;

/** How many runs of the same event in this process a delivery waits for before answering 503 instead. */
const MAX_LOCAL_WAITS = 2;

/** The answer once the event is handled (or has no handler). */
export const ok: Answer = { status: 204, body: null };

/**
 * Returns `once(event, run, latest)`: the answer to a verified event, its handler run at most once at a time;
 * `latest` (ms) is the latest `created_at` its signature allows, past which it is not used for ordering.
 */
export function handleOnce(
  options: HandleOnceOptions,
  report: (error: unknown, context: WebhookErrorContext) => Promise<void>,
): (event: WebhookEvent, run: RunHandler, latest: number) => Promise<Answer> {
  // Timers: past setTimeout's ceiling one fires at once, and every handler would time out. The claim's ttl is no timer.
  const handlerTimeoutMs = integerOption(options.handlerTimeoutMs, 'handlerTimeoutMs', DEFAULT_HANDLER_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
  const dedupeTimeoutMs = integerOption(options.dedupeTimeoutMs, 'dedupeTimeoutMs', DEFAULT_DEDUPE_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
  const inFlightTtlMs = integerOption(options.inFlightTtlMs, 'inFlightTtlMs', DEFAULT_IN_FLIGHT_TTL_MS, 1, Number.MAX_SAFE_INTEGER);
  const holdMs = handlerTimeoutMs + 2 * dedupeTimeoutMs;
  if (inFlightTtlMs <= holdMs) {
    // Else a live, slow holder could lose its claim and a duplicate run the handler beside it.
    invalidOption(
      'inFlightTtlMs',
      `is too short: inFlightTtlMs (${inFlightTtlMs}) must be longer than handlerTimeoutMs + 2 × dedupeTimeoutMs (${holdMs}). Raise it, or lower those two.`,
    );
  }
  const store = toStore(options.dedupe);
  // By then the run in flight has finished or timed out: the retry finds it done, runs it, or (a run past its time
  // bound goes on) is answered this again.
  const inFlight: Answer = { status: 503, body: 'in_flight', retryAfter: Math.ceil(handlerTimeoutMs / 1000) };
  /**
   * Events being handled in this process, by key. A duplicate here waits for the outcome instead of a 503; the
   * promise it waits on is made only then, so a delivery without duplicates allocates none.
   */
  const running = new Map<string, { done?: Promise<void>; settle?: () => void }>();

  const call = <T>(step: WebhookTimedStep, work: () => T) =>
    timeBound(work, dedupeTimeoutMs, () => new WebhookTimeoutError(step, dedupeTimeoutMs));
  /** A store call whose outcome no answer waits for (a give-back after a failed claim, a renewal, a late done mark). */
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
   * A run past its time bound keeps its claim until it settles, so that no retry runs the handler beside it: the
   * claim is renewed (claimed again under its own id) at once and then every `handlerTimeoutMs`, which
   * `inFlightTtlMs` outlasts with two store calls. Settled, the event is marked done, or given back when the run
   * failed, so a retry runs it. If this process dies meanwhile, the claim expires and a retry runs the handler.
   */
  async function outlive(work: PromiseLike<unknown>, key: string, context: WebhookClaimContext): Promise<void> {
    let live = true;
    const settled = Promise.resolve(work)
      .then(() => 'complete' as const, () => 'release' as const)
      .finally(() => (live = false));
    // Claims expire only in a store that marks events done (without `complete`, a claim is the done mark).
    while (live && store!.complete !== undefined) {
      await quietly('claim', () => store!.claim(key, context));
      await timeBound(() => settled, handlerTimeoutMs, () => new Error('renew'), true).catch(() => {});
    }
    const step = await settled;
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
      return ok;
    }
    for (let waits = 0, entry = running.get(key); entry !== undefined && waits < MAX_LOCAL_WAITS; waits++, entry = running.get(key)) {
      await (entry.done ??= new Promise((resolve) => (entry!.settle = resolve)));
    }
    if (running.has(key)) return inFlight;
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
      if (claim.state !== 'new') return claim.state === 'done' ? ok : inFlight;
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
      return ok;
    } finally {
      running.delete(key);
      entry.settle?.();
    }
  };
}

/** The store to call, or `undefined` for `dedupe: false`. Methods are called on the store (`this` kept). */
function toStore(dedupe: WebhookDedupe | false | undefined): Partial<WebhookDedupeStore> & Pick<WebhookDedupeStore, 'claim'> | undefined {
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
  throw new PostSchedError("dedupe claim() answered a state other than 'new', 'in-flight', 'done'");
}

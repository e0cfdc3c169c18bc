/**
 * `createWebhookHandler`: verify, claim the event, dispatch to a typed handler per event, and answer as the
 * service needs (assumptions.md "Webhook retries, time-outs, expected status"). Framework-free: the adapters
 * speak Fetch (`.fetch`) and node:http (`.node`). Imported by nothing the verifier uses, so a bundle of
 * `verifyWebhook` alone leaves all of this out.
 */
import { checkOptions, integerOption, invalidOption, MAX_TIMEOUT_MS, optionNames, refusal } from '../core/invalid-option.js';
import { bodyLimit, requestBody, type BodySource } from './body.js';
import { handleOnce, toStore, type RunHandler, type WebhookDedupe, type WebhookHandlerContext } from './dedupe.js';
import { WebhookVerificationError } from './errors.js';
import type { KnownWebhookEvent, UnknownWebhookEvent, WebhookEvent, WebhookEventType } from './event.js';
import { nodeBody, writeNodeAnswer, type NodeWebhookRequest, type NodeWebhookResponse } from './handler-node.js';
import { toSecretList, type HmacBackend, type WebhookSecret } from './signature.js';
import { toleranceOf, verifyDelivery, type VerifyWebhookClockOptions } from './verify.js';

/**
 * One handler per event name, each given its own event type and a `WebhookHandlerContext`. A handler that
 * returns a promise is awaited before the answer; one that throws (or rejects, or runs past `handlerTimeoutMs`)
 * makes the answer a 500, so the service retries.
 *
 * @example
 * on: {
 *   'post.published': (event) => queue.add('published', { postId: event.data.id, at: event.data.published_at }),
 *   'post.scheduled': async (event, { stale }) => {
 *     if (!stale) await db.posts.update(event.data.id, { status: 'scheduled' }) // a late one must not undo "published"
 *   },
 * }
 */
export type WebhookEventHandlers = {
  [Name in WebhookEventType]?: (event: Extract<KnownWebhookEvent, { event: Name }>, context: WebhookHandlerContext) => unknown;
};

/** What `onError` is told beside the error. */
export interface WebhookErrorContext {
  /**
   * The status answered: 400 (the delivery did not verify), 500 (configuration, dedupe store, handler), or 204 when
   * the handler finished but the store could not mark the event done (a duplicate after its claim expires may
   * run it again).
   */
  status: 204 | 400 | 500;
  /** The verified event, when the failure came after verification (a dedupe store or a handler failed). */
  event?: WebhookEvent;
}

/** Options of `createWebhookHandler`. */
export interface WebhookHandlerOptions extends VerifyWebhookClockOptions {
  /**
   * The endpoint's webhook secret, or several during a rotation. Checked here: a missing, blank or padded secret
   * (an unset `POSTSCHED_WEBHOOK_SECRET`) throws a `ValidationError` at start-up, not a 500 at the first delivery.
   */
  secret: WebhookSecret;
  /** The handler of each event name you act on. An event without one is answered 2xx and dropped. */
  on: WebhookEventHandlers;
  /** Called with a verified event whose name this SDK version does not know; without it they are dropped (2xx). */
  onUnknown?: ((event: UnknownWebhookEvent, context: WebhookHandlerContext) => unknown) | undefined;
  /**
   * Called for every delivery answered 400 or 500, before the answer: a `WebhookVerificationError` (400; its
   * `reason` says why), or a configuration mistake, a failing dedupe store or handler, a `WebhookTimeoutError`
   * (500). Also when only the store's `complete` failed after the handler finished (204). Not for the 503 to a
   * duplicate in flight, which is expected traffic. Default: the 500s and 204s logged with `console.error`, the 400s
   * with `logger.warn` once per `reason` per minute (a wrong secret shows up; a flood of forgeries does not flood the
   * log). Messages carry no secret and no body. Errors it throws are ignored.
   */
  onError?: ((error: unknown, context: WebhookErrorContext) => unknown) | undefined;
  /** Where the default `onError` warns of refused deliveries (400), once per `reason` per minute. Default `console`. */
  logger?:
    | {
        /** Given one line per refused delivery's `reason` per minute; what it returns is ignored. */
        warn(message: string): unknown;
      }
    | undefined;
  /**
   * Where events being handled and handled are kept, so that each event's handler succeeds once however often and
   * wherever the service delivers it (see `WebhookDedupe` and `webhookDedupeKey`). Default: this process's memory,
   * the last 10,000 events. Several processes or instances need one shared store:
   * `new RedisWebhookDedupe({ redis })` from `@postsched/sdk/redis`, or `new PostgresWebhookDedupe({ pool })` from
   * `@postsched/sdk/postgres`. `false`: no deduplication.
   *
   * @example
   * dedupe: new RedisWebhookDedupe({ redis: new Redis(process.env.REDIS_URL!) })
   */
  dedupe?: WebhookDedupe | false | undefined;
  /**
   * How long a handler may run, in ms (default 10 000, under the time-outs of common senders; at most 2 147 483 647,
   * `setTimeout`'s ceiling). Past it the answer is 500 (so the service retries), its `signal` is aborted and
   * `onError` gets a `WebhookTimeoutError` (`handler_timeout`). The run cannot be stopped: it keeps the event's claim
   * until it settles (then the event is done if it succeeded, or given back if it failed, so a retry runs it again),
   * but no longer than `inFlightTtlMs` from the claim, and retries meanwhile get 503. After that a retry runs the
   * handler: a handler still running past `inFlightTtlMs` may run twice.
   */
  handlerTimeoutMs?: number | undefined;
  /**
   * How long each dedupe store call may take, in ms (default 5 000, at most 2 147 483 647). Past it the delivery is
   * answered 500 (never 2xx for an event not handled) and `onError` gets a `WebhookTimeoutError` (`dedupe_timeout`).
   */
  dedupeTimeoutMs?: number | undefined;
  /**
   * How long a claim in flight lasts, in ms (default 30 000): a process that died mid-handler, or a handler that
   * hangs, blocks its event this long, then the service's next retry runs the handler (a hung one may then run
   * twice). Must be longer than `handlerTimeoutMs + 2 × dedupeTimeoutMs`, so a handler within its time bound never
   * loses its claim.
   */
  inFlightTtlMs?: number | undefined;
  /** The largest body read, in bytes (default 1 MiB); a longer one is answered 400 `body_too_large`. */
  maxBodyBytes?: number | undefined;
}

const HANDLER_OPTIONS = /* @__PURE__ */ optionNames<WebhookHandlerOptions>({
  secret: 0, on: 0, onUnknown: 0, onError: 0, logger: 0, dedupe: 0, handlerTimeoutMs: 0, dedupeTimeoutMs: 0, inFlightTtlMs: 0, maxBodyBytes: 0, toleranceSeconds: 0, now: 0,
});

/**
 * A webhook endpoint, ready to mount. Each adapter is a bound function: pass it on as it is.
 * Answers: 204 once the event's handler finished (or for an event without a handler, or one handled already);
 * 503 `in_flight` with `Retry-After` while another delivery of the event is being handled (the service retries);
 * 400 with the `reason` code as text when the delivery does not verify; 500 when a handler, the dedupe store or
 * the configuration (secret, a body parser before the handler) failed or overran its time bound, so the service
 * retries; 405 for any method but POST.
 */
export interface WebhookHandler {
  /**
   * For Fetch-based servers: Next.js route handlers, Hono, Bun, Deno, Cloudflare Workers, Vercel Edge.
   *
   * @example
   * export const POST = webhooks.fetch             // Next.js app/api/webhooks/route.ts
   * app.post('/webhooks', (c) => webhooks.fetch(c.req.raw))   // Hono
   */
  fetch(request: Request): Promise<Response>;
  /**
   * For node:http servers: `http.createServer(webhooks.node)`, Express (`app.post('/webhooks', webhooks.node)`,
   * with no body parser before it), Fastify (a raw `Buffer` body in `request.body`; `reply.hijack()` first).
   * Reads the stream itself, or uses a raw `req.body` (Buffer, string) when a framework already read it.
   *
   * @example
   * app.post('/webhooks/postsched', webhooks.node)
   */
  node(req: NodeWebhookRequest, res: NodeWebhookResponse): Promise<void>;
}

/** The answer, whatever server it goes out through. */
interface Answer {
  readonly status: 204 | 400 | 405 | 500 | 503;
  readonly body: string | null;
  /** Seconds, sent as `Retry-After`. */
  readonly retryAfter?: number;
}

/** Reasons that are our configuration, not the sender's doing: a 500, so deliveries are retried once fixed. */
const CONFIGURATION_REASONS: readonly string[] = ['invalid_secret', 'body_not_raw'];

const serverError: Answer = { status: 500, body: 'server_error' };

/** The default `onError` warns of each refusal `reason` at most once per this many ms. */
const WARN_EVERY_MS = 60_000;

/** Under the time-outs of common senders (GitHub 10 s, Shopify 5 s, Stripe 20 s): our 500 comes first. */
const DEFAULT_HANDLER_TIMEOUT_MS = 10_000;
/** Each dedupe store call; a store slower than this is down for webhook purposes. */
const DEFAULT_DEDUPE_TIMEOUT_MS = 5_000;
/** Above a handler's whole time (10 s) plus its two store calls (2 × 5 s), so a live holder never loses its claim. */
const DEFAULT_IN_FLIGHT_TTL_MS = 30_000;

/** The answer once the event is handled (or has no handler). */
const ok: Answer = { status: 204, body: null };

/** The answer's headers, whichever server sends it. */
function headersOf({ status, body, retryAfter }: Answer): Record<string, string> {
  const headers: Record<string, string> = status === 405 ? { allow: 'POST' } : {};
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  if (body !== null) headers['content-type'] = 'text/plain; charset=utf-8';
  return headers;
}

/** `createWebhookHandler` with a given HMAC backend. */
export function createHandlerWith(backend: HmacBackend, options: WebhookHandlerOptions): WebhookHandler {
  options = checkOptions(options, HANDLER_OPTIONS, 'createWebhookHandler()');
  try {
    toSecretList(options.secret);
  } catch (error) {
    // The same words as a delivery's check, as a ValidationError now: a missing secret fails the deploy, not a delivery.
    throw refusal(`\`secret\` is refused by createWebhookHandler(): ${(error as Error).message}`, ['secret']);
  }
  const logger = options.logger ?? console;
  if (typeof logger?.warn !== 'function') invalidOption('logger', 'must have a `warn(message)` method, as `console` has.');
  // The options, checked here, at start-up: a bad constant fails now, not on the first delivery. Timers: past
  // setTimeout's ceiling one fires at once, and every handler would time out. The claim's ttl is no timer.
  const limit = bodyLimit(options.maxBodyBytes);
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
  const { on, onUnknown, onError } = options;
  /** reason → when the default `onError` last warned of it. */
  const warned = new Map<string, number>();
  const once = handleOnce({ store, handlerTimeoutMs, dedupeTimeoutMs, inFlightTtlMs }, report);
  // By then the run in flight has finished or timed out: the retry finds it done, runs it, or (a run past its time
  // bound goes on) is answered this again.
  const inFlight: Answer = { status: 503, body: 'in_flight', retryAfter: Math.ceil(handlerTimeoutMs / 1000) };

  async function report(error: unknown, context: WebhookErrorContext): Promise<void> {
    try {
      if (onError !== undefined) await onError(error, context);
      else if (context.status !== 400) console.error(`postsched webhook answered ${context.status}:`, error);
      else warnOnce(error as WebhookVerificationError);
    } catch {
      // onError is the last resort: a failure in it must not change the answer.
    }
  }

  /** A refused delivery, told once per reason per minute: its reason and message (never the secret or the body). */
  function warnOnce({ reason, message }: WebhookVerificationError): void {
    const now = Date.now();
    if (now - (warned.get(reason) ?? -Infinity) < WARN_EVERY_MS) return;
    warned.set(reason, now);
    logger.warn(`postsched webhook refused a delivery (400 ${reason}): ${message}. No more ${reason} logged for a minute.`);
  }

  /** The answer to a delivery: its method, its headers (where the signature is) and its body. */
  async function answer(method: string | undefined, headers: unknown, body: BodySource): Promise<Answer> {
    if (method?.toUpperCase() !== 'POST') {
      body.discard();
      return { status: 405, body: 'method_not_allowed' };
    }
    let event: WebhookEvent;
    // The latest `created_at` the event can have, in ms: its signature's timestamp plus the tolerance between the clocks.
    let latest = 0;
    try {
      event = await verifyDelivery(backend, { ...options, signature: headers, body }, (timestamp) => (latest = (timestamp + toleranceOf(options)) * 1000));
    } catch (error) {
      body.discard(); // whatever of the body was not read stays unread
      const rejected = error instanceof WebhookVerificationError && !CONFIGURATION_REASONS.includes(error.reason);
      await report(error, { status: rejected ? 400 : 500 });
      return rejected ? { status: 400, body: error.reason } : serverError;
    }
    try {
      const run = (event.event === 'unknown' ? onUnknown : on[event.event]) as RunHandler | undefined;
      // Nobody listens: acknowledged, nothing remembered.
      return run === undefined || (await once(event, run, latest)) ? ok : inFlight;
    } catch (error) {
      await report(error, { status: 500, event });
      return serverError;
    }
  }

  return {
    async fetch(request) {
      const answered = await answer(request.method, request.headers, requestBody(request, limit));
      return new Response(answered.body, { status: answered.status, headers: headersOf(answered) });
    },
    async node(req, res) {
      const body = nodeBody(req, limit);
      const answered = await answer(req.method, req.headers, body);
      const headers = headersOf(answered);
      // A body we did not read (rejected on its header, or over the cap) would otherwise be read to its end by
      // node:http to keep the connection alive: close it instead.
      if (body.leftUnread()) headers.connection = 'close';
      writeNodeAnswer(res, answered.status, headers, answered.body);
    },
  };
}

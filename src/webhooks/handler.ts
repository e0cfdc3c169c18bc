/**
 * `createWebhookHandler`: verify, claim the event, dispatch to a typed handler per event, and answer as the
 * service needs (assumptions.md "Webhook retries, time-outs, expected status"). Framework-free: the adapters
 * speak Fetch (`.fetch`) and node:http (`.node`). Imported by nothing the verifier uses, so a bundle of
 * `verifyWebhook` alone leaves all of this out.
 */
import { WebhookVerificationError } from './errors.js';
import type { KnownWebhookEvent, UnknownWebhookEvent, WebhookEvent, WebhookEventType } from './event.js';
import { handleOnce, ok, type RunHandler, type WebhookDedupe } from './dedupe.js';
import { nodeDelivery, writeNodeAnswer, type NodeWebhookRequest, type NodeWebhookResponse } from './handler-node.js';
import { assertUnreadRequest, bodyLimit, discardRequestBody, readRequestBody } from './body.js';
import { toSecretList, type HmacBackend, type WebhookSecret } from './signature.js';
import { checkSignature, toleranceOf, verifySigned, type VerifyWebhookClockOptions } from './verify.js';

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
   * Aborted when the handler runs past `handlerTimeoutMs` (the delivery is then answered 500): stop there. Until the
   * handler settles its event stays claimed, so retries are answered 503.
   */
  readonly signal: AbortSignal;
}

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
  /** The endpoint's webhook secret, or several during a rotation. Checked on each delivery (a 500 when bad). */
  secret: WebhookSecret;
  /** The handler of each event name you act on. An event without one is answered 2xx and dropped. */
  on: WebhookEventHandlers;
  /** Called with a verified event whose name this SDK version does not know; without it they are dropped (2xx). */
  onUnknown?: ((event: UnknownWebhookEvent, context: WebhookHandlerContext) => unknown) | undefined;
  /**
   * Called for every delivery answered 400 or 500, before the answer: a `WebhookVerificationError` (400; its
   * `reason` says why), or a configuration mistake, a failing dedupe store or handler, a `WebhookTimeoutError`
   * (500). Also when only the store's `complete` failed after the handler finished (204). Not for the 503 to a
   * duplicate in flight, which is expected traffic. Default: log all but the 400s with `console.error` (messages
   * carry no secret). Errors it throws are ignored.
   */
  onError?: ((error: unknown, context: WebhookErrorContext) => unknown) | undefined;
  /**
   * Where events being handled and handled are kept, so that each event's handler succeeds once however often and
   * wherever the service delivers it (see `WebhookDedupe` and `webhookDedupeKey`). Default: this process's memory,
   * the last 10,000 events. Several processes or instances need one shared store:
   * `new RedisWebhookDedupe({ redis })` from `@postsched/sdk/redis`. `false`: no deduplication.
   *
   * @example
   * dedupe: new RedisWebhookDedupe({ redis: new Redis(process.env.REDIS_URL!) })
   */
  dedupe?: WebhookDedupe | false | undefined;
  /**
   * How long a handler may run, in ms (default 10 000, under the time-outs of common senders; at most 2 147 483 647,
   * `setTimeout`'s ceiling). Past it the answer is 500 (so the service retries), its `signal` is aborted and
   * `onError` gets a `WebhookTimeoutError` (`handler_timeout`). The run cannot be stopped, so it keeps the event's
   * claim (renewed every `handlerTimeoutMs`) until it settles, and retries meanwhile get 503: then the event is
   * done if it succeeded, or given back if it failed, so a later retry runs the handler again.
   */
  handlerTimeoutMs?: number | undefined;
  /**
   * How long each dedupe store call may take, in ms (default 5 000, at most 2 147 483 647). Past it the delivery is
   * answered 500 (never 2xx for an event not handled) and `onError` gets a `WebhookTimeoutError` (`dedupe_timeout`).
   */
  dedupeTimeoutMs?: number | undefined;
  /**
   * How long a claim in flight lasts, in ms (default 30 000): a process that died mid-handler blocks its event
   * this long, then the service's next retry runs the handler. Must be longer than
   * `handlerTimeoutMs + 2 × dedupeTimeoutMs`, so a live holder never loses its claim (a handler past its time-out
   * renews it every `handlerTimeoutMs`).
   */
  inFlightTtlMs?: number | undefined;
  /** The largest body read, in bytes (default 1 MiB); a longer one is answered 400 `body_too_large`. */
  maxBodyBytes?: number | undefined;
}

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

/** A delivery as the core sees it, whatever server it came through. */
export interface Delivery {
  readonly method: string | undefined;
  /** A Fetch `Headers` or a Node headers object. */
  readonly headers: unknown;
  /** Throws `body_not_raw` when the body is gone (read by someone else) or was parsed. Reads nothing. */
  assertReadable(): void;
  /** The raw body, at most `limit` bytes (`body_too_large` past that). */
  read(limit: number): Promise<string | Uint8Array>;
  /** Drops a body that will not be read. */
  discard(): void;
}

/** The answer, whatever server it goes out through. */
export interface Answer {
  readonly status: 204 | 400 | 405 | 500 | 503;
  readonly body: string | null;
  /** Seconds, sent as `Retry-After`. */
  readonly retryAfter?: number;
}

/** Reasons that are our configuration, not the sender's doing: a 500, so deliveries are retried once fixed. */
const CONFIGURATION_REASONS: ReadonlySet<string> = new Set(['invalid_secret', 'body_not_raw']);

const serverError: Answer = { status: 500, body: 'server_error' };

/** `createWebhookHandler` with a given HMAC backend. */
export function createHandlerWith(backend: HmacBackend, options: WebhookHandlerOptions): WebhookHandler {
  const limit = bodyLimit(options.maxBodyBytes); // a bad constant fails at start-up, not on the first delivery
  const { on, onUnknown, onError } = options;
  const once = handleOnce(options, report);

  async function report(error: unknown, context: WebhookErrorContext): Promise<void> {
    try {
      if (onError !== undefined) await onError(error, context);
      else if (context.status !== 400) console.error(`postsched webhook answered ${context.status}:`, error);
    } catch {
      // onError is the last resort: a failure in it must not change the answer.
    }
  }

  /**
   * Configuration first, then everything the header decides, and only then the body. Also returns the latest
   * `created_at` the event can have, in ms: its signature's timestamp plus the tolerance between the clocks.
   */
  async function verify(delivery: Delivery): Promise<[WebhookEvent, number]> {
    const secrets = toSecretList(options.secret);
    delivery.assertReadable();
    const signature = checkSignature(delivery.headers, options);
    const event = await verifySigned(backend, secrets, signature, await delivery.read(limit));
    return [event, (signature.timestamp + toleranceOf(options)) * 1000];
  }

  function dispatch(event: WebhookEvent, latest: number): Answer | Promise<Answer> {
    const run = (event.event === 'unknown' ? onUnknown : on[event.event]) as RunHandler | undefined;
    return run === undefined ? ok : once(event, run, latest); // nobody listens: acknowledged, nothing remembered
  }

  async function answer(delivery: Delivery): Promise<Answer> {
    if (delivery.method?.toUpperCase() !== 'POST') {
      delivery.discard();
      return { status: 405, body: 'method_not_allowed' };
    }
    let event: WebhookEvent;
    let latest: number;
    try {
      [event, latest] = await verify(delivery);
    } catch (error) {
      delivery.discard(); // whatever of the body was not read stays unread
      const rejected = error instanceof WebhookVerificationError && !CONFIGURATION_REASONS.has(error.reason);
      await report(error, { status: rejected ? 400 : 500 });
      return rejected ? { status: 400, body: error.reason } : serverError;
    }
    try {
      return await dispatch(event, latest);
    } catch (error) {
      await report(error, { status: 500, event });
      return serverError;
    }
  }

  return {
    async fetch(request) {
      const delivery: Delivery = {
        method: request.method,
        headers: request.headers,
        assertReadable: () => assertUnreadRequest(request),
        read: (max) => readRequestBody(request, max),
        discard: () => discardRequestBody(request),
      };
      const { status, body, retryAfter } = await answer(delivery);
      const headers: Record<string, string> = status === 405 ? { allow: 'POST' } : {};
      if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
      if (body !== null) headers['content-type'] = 'text/plain; charset=utf-8';
      return new Response(body, { status, headers });
    },
    async node(req, res) {
      const delivery = nodeDelivery(req);
      writeNodeAnswer(res, await answer(delivery), delivery);
    },
  };
}

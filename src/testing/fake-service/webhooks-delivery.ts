/**
 * Webhook delivery (spec 4.3, 6 and "Webhook signature"): each event goes only to the endpoints subscribed to
 * it, as a POST signed with `X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`.
 *
 * The signing is written here from the spec with Web Crypto, independently of the SDK's verifier: the fake is
 * the other side of the protocol, and two independent implementations are what catch a bug in either.
 */
import type { Scheduler } from './clock.js';
import { randomId } from './http.js';
import type { FakePost, State, WebhookEventType } from './state.js';

/** How the fake delivers webhooks. */
export interface WebhookDeliveryOptions {
  /** The fetch used to POST deliveries (default: `globalThis.fetch`, read at send time so msw sees it). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Attempts per event and endpoint, the first included (default 5). */
  maxAttempts?: number;
  /** Delay before the first retry, on the fake clock; doubles after each failed attempt (default 1,000 ms). */
  backoffMs?: number;
  /**
   * How long one attempt may wait for the receiver, in real milliseconds (default 10,000). Real time, not the
   * fake clock: a receiver that never answers would otherwise hang until someone advanced the clock.
   */
  timeoutMs?: number;
}

/** One delivery attempt, as recorded for assertions. */
export interface WebhookDelivery {
  /** The same for every attempt of one event to one endpoint. */
  eventId: string;
  /** The endpoint it was sent to. */
  endpointId: string;
  /** The event name. */
  event: WebhookEventType;
  /** The endpoint's URL. */
  url: string;
  /** The request headers sent, lower-case names. */
  headers: Record<string, string>;
  /** The raw JSON body, exactly as signed and sent. */
  body: string;
  /** 1 for the first try, 2 for the first retry… */
  attempt: number;
  /** The receiver's status, or `null` when it did not answer (see `error`). */
  status: number | null;
  /** Why there was no answer: the attempt timed out, or the connection failed. */
  error?: 'timeout' | 'network';
  /** When the attempt was sent, on the fake clock (ISO 8601). */
  sentAt: string;
}

const encoder = new TextEncoder();

/** The `X-Service-Signature` value for `body` at `timestamp` (unix seconds), per the spec's signature section. */
export async function signatureHeader(secret: string, timestamp: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(`${timestamp}.${body}`)));
  let hex = '';
  for (const byte of mac) hex += byte.toString(16).padStart(2, '0');
  return `t=${timestamp},v1=${hex}`;
}

export class WebhookDispatcher {
  readonly deliveries: WebhookDelivery[] = [];
  readonly #state: State;
  readonly #clock: () => Scheduler;
  readonly #options: Required<Omit<WebhookDeliveryOptions, 'fetch'>> & Pick<WebhookDeliveryOptions, 'fetch'>;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #closing = new AbortController();

  constructor(state: State, clock: () => Scheduler, options: WebhookDeliveryOptions = {}) {
    this.#state = state;
    this.#clock = clock;
    this.#options = {
      maxAttempts: options.maxAttempts ?? 5,
      backoffMs: options.backoffMs ?? 1_000,
      timeoutMs: options.timeoutMs ?? 10_000,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    };
  }

  /** Sends `event` for `post` to every endpoint subscribed to it (spec 6), at once; retries go on the clock. */
  emit(event: WebhookEventType, post: FakePost): void {
    const now = new Date(this.#clock().now()).toISOString();
    const body = JSON.stringify({ event, created_at: now, data: { ...post } });
    for (const endpoint of this.#state.endpoints.values()) {
      if (!endpoint.events.includes(event)) continue;
      this.#attempt({ eventId: randomId('evt'), endpointId: endpoint.id, event, body }, 1);
    }
  }

  /** Resolves once no attempt is in flight (retries scheduled later on the clock are not waited for). */
  async flush(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /** Aborts attempts in flight and stops retries. */
  close(): void {
    this.#closing.abort();
  }

  #attempt(job: Job, attempt: number): void {
    const sending = this.#send(job, attempt).finally(() => this.#inFlight.delete(sending));
    this.#inFlight.add(sending);
  }

  async #send(job: Job, attempt: number): Promise<void> {
    const endpoint = this.#state.endpoints.get(job.endpointId);
    if (endpoint === undefined || this.#closing.signal.aborted) return; // removed or closed meanwhile
    const clock = this.#clock();
    // Signed at the moment it is sent, on the wall clock, not the fake's: the receiver checks the timestamp
    // against its own clock (replay protection), so a test that moved the fake's clock still verifies its
    // deliveries with verifyWebhook's default options. `created_at` and `published_at` follow the fake's clock.
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'postsched-fake-service',
      'x-service-signature': await signatureHeader(endpoint.secret, timestamp, job.body),
    };
    const sentAt = new Date(clock.now()).toISOString();
    // One signal for both ends of an attempt: the per-attempt timeout and `fake.close()`.
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, this.#options.timeoutMs);
    const onClose = () => abort.abort();
    this.#closing.signal.addEventListener('abort', onClose);
    let status: number | null = null;
    let error: 'timeout' | 'network' | undefined;
    try {
      const send = this.#options.fetch ?? globalThis.fetch;
      const response = await send(endpoint.url, {
        method: 'POST',
        headers,
        body: job.body,
        redirect: 'manual',
        signal: abort.signal,
      });
      status = response.status;
      await response.body?.cancel().catch(() => undefined);
    } catch {
      error = timedOut ? 'timeout' : 'network';
    } finally {
      clearTimeout(timer);
      this.#closing.signal.removeEventListener('abort', onClose);
    }
    const { eventId, endpointId, event, body } = job;
    this.deliveries.push({
      eventId, endpointId, event, url: endpoint.url, headers, body, attempt, status, sentAt,
      ...(error === undefined ? {} : { error }),
    });
    const delivered = status !== null && status >= 200 && status < 300;
    if (delivered || attempt >= this.#options.maxAttempts || this.#closing.signal.aborted) return;
    // Exponential backoff on the fake clock: backoffMs, 2×, 4×…
    const delay = this.#options.backoffMs * 2 ** (attempt - 1);
    clock.schedule(clock.now() + delay, () => this.#attempt(job, attempt + 1));
  }
}

interface Job {
  eventId: string;
  endpointId: string;
  event: WebhookEventType;
  body: string;
}

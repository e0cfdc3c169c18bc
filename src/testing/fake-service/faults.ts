/**
 * Fault injection: make the next N requests to a route fail the way real networks and services fail, so a
 * client's retry, timeout and idempotency logic can be tested deterministically.
 */
import { apiError } from './http.js';

/** Which requests a fault applies to. Both fields are optional: omitted means "any". */
export interface FaultTarget {
  /** HTTP method, case-insensitive (`'POST'`). */
  method?: string;
  /** A route template (`'/posts/{id}'`) or a concrete path (`'/posts/post_1'`), relative to the base URL. */
  path?: string;
  /** How many matching requests it affects (default 1; `Infinity` for all). */
  times?: number;
}

/**
 * The fake's fault injector (`fake.faults`). Faults apply in the order added; each matching request takes
 * one use of the first matching fault. Latency adds to whichever fault (or normal answer) follows.
 *
 * @example
 * fake.faults.rateLimit({ method: 'POST', path: '/posts', retryAfter: 2 });
 * fake.faults.error({ method: 'POST', path: '/posts', status: 503, times: 2 });
 * fake.faults.reset({ path: '/accounts' });       // the connection drops (handler mode: fetch-like TypeError)
 * fake.faults.hang({ path: '/posts/{id}' });      // never answers until the request is aborted or the fake closes
 * fake.faults.latency({ ms: 50 });               // every request waits 50 real ms first
 * fake.faults.dropAnswer({ method: 'POST', path: '/posts' }); // the post is created, then its answer is lost
 */
export interface FakeFaults {
  /** 429 with `Retry-After` (seconds, default 1; or an HTTP date string). */
  rateLimit(target: FaultTarget & { retryAfter?: number | string }): void;
  /** An error status (default 503), with an optional `Retry-After`. */
  error(target: FaultTarget & { status?: number; retryAfter?: number | string }): void;
  /** Never answers; released (as an abort) when the request's signal aborts or the fake closes. */
  hang(target?: FaultTarget): void;
  /** Drops the connection: over `listen()` the socket is destroyed; in handler mode the call rejects. */
  reset(target?: FaultTarget): void;
  /** Lets the request act (the post is created), then drops the connection instead of answering, as `reset` does. */
  dropAnswer(target?: FaultTarget): void;
  /** Delays matching requests by `ms` real milliseconds (default: every request, for ever). */
  latency(target: FaultTarget & { ms: number }): void;
  /** Removes every fault. */
  clear(): void;
}

/** What the handler throws for a `reset` fault: the same type `fetch` rejects with on a dropped connection. */
export class ConnectionResetFault extends TypeError {
  constructor() {
    super('fetch failed: connection reset by the fake service (fault injection)');
  }
}

type Action =
  | { kind: 'answer'; make: () => Response }
  | { kind: 'hang' }
  | { kind: 'reset' }
  | { kind: 'drop' }
  | { kind: 'latency'; ms: number };

interface Fault {
  method: string | undefined;
  path: string | undefined;
  left: number;
  action: Action;
}

export class FaultInjector implements FakeFaults {
  #faults: Fault[] = [];
  readonly #closing = new AbortController();

  rateLimit(target: FaultTarget & { retryAfter?: number | string }): void {
    const retryAfter = String(target.retryAfter ?? 1);
    this.#add(target, 1, {
      kind: 'answer',
      make: () =>
        apiError(429, 'rate_limited', 'Too many requests; retry after the Retry-After delay.', {
          headers: { 'retry-after': retryAfter },
        }),
    });
  }

  error(target: FaultTarget & { status?: number; retryAfter?: number | string }): void {
    const status = target.status ?? 503;
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new RangeError(`faults.error({ status }) takes an error status 400-599; got ${String(status)}`);
    }
    const headers: Record<string, string> = {};
    if (target.retryAfter !== undefined) headers['retry-after'] = String(target.retryAfter);
    const code = status === 503 ? 'service_unavailable' : status >= 500 ? 'server_error' : 'injected_error';
    this.#add(target, 1, {
      kind: 'answer',
      make: () => apiError(status, code, `Injected ${status} (fault injection).`, { headers }),
    });
  }

  hang(target: FaultTarget = {}): void {
    this.#add(target, 1, { kind: 'hang' });
  }

  reset(target: FaultTarget = {}): void {
    this.#add(target, 1, { kind: 'reset' });
  }

  dropAnswer(target: FaultTarget = {}): void {
    this.#add(target, 1, { kind: 'drop' });
  }

  latency(target: FaultTarget & { ms: number }): void {
    if (!(target.ms >= 0)) throw new RangeError('faults.latency({ ms }) needs ms >= 0');
    this.#add(target, Number.POSITIVE_INFINITY, { kind: 'latency', ms: target.ms });
  }

  clear(): void {
    this.#faults = [];
  }

  /** Releases every hanging request and pending latency. */
  close(): void {
    this.#closing.abort();
    this.#faults = [];
  }

  /**
   * Applies the faults matching this request: waits for latency, then answers, hangs or throws.
   * Returns `undefined` when the request should go on to its route, `'drop'` when it should, then lose its answer.
   */
  async apply(method: string, route: string, path: string, signal: AbortSignal): Promise<Response | 'drop' | undefined> {
    const latency = this.#take(method, route, path, 'latency');
    if (latency?.kind === 'latency' && latency.ms > 0) await this.#wait(signal, latency.ms);
    const action = this.#take(method, route, path, undefined);
    if (action === undefined || action.kind === 'latency') return undefined;
    if (action.kind === 'answer') return action.make();
    if (action.kind === 'reset') throw new ConnectionResetFault();
    if (action.kind === 'drop') return 'drop';
    await this.#wait(signal, undefined);
    return undefined; // unreachable: #wait without a delay only ends by throwing
  }

  #add(target: FaultTarget, defaultTimes: number, action: Action): void {
    const left = target.times ?? defaultTimes;
    if (!(left >= 1)) throw new RangeError('A fault needs times >= 1');
    this.#faults.push({ method: target.method?.toUpperCase(), path: target.path, left, action });
  }

  #take(method: string, route: string, path: string, kind: 'latency' | undefined): Action | undefined {
    const fault = this.#faults.find(
      (f) =>
        (kind === 'latency') === (f.action.kind === 'latency') &&
        (f.method === undefined || f.method === '*' || f.method === method) &&
        (f.path === undefined || f.path === route || f.path === path),
    );
    if (fault === undefined) return undefined;
    if (--fault.left <= 0) this.#faults.splice(this.#faults.indexOf(fault), 1);
    return fault.action;
  }

  /** Waits `ms` (or for ever), ending early with an AbortError when the request aborts or the fake closes. */
  #wait(signal: AbortSignal, ms: number | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const stop = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', stop);
        this.#closing.signal.removeEventListener('abort', stop);
        reject(new DOMException('The request was aborted while the fault held it.', 'AbortError'));
      };
      const timer =
        ms === undefined
          ? undefined
          : setTimeout(() => {
              signal.removeEventListener('abort', stop);
              this.#closing.signal.removeEventListener('abort', stop);
              resolve();
            }, ms);
      if (signal.aborted || this.#closing.signal.aborted) return stop();
      signal.addEventListener('abort', stop);
      this.#closing.signal.addEventListener('abort', stop);
    });
  }
}

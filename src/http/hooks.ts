/**
 * `onRequest`, `onResponse` and `onRetry`: callbacks to count, log or sample calls without a custom fetch. Each gets
 * a read-only view built only when the hook is set; none holds the Authorization header or any token, and a hook
 * that throws (or rejects) never breaks the call.
 */
import { scrubHeaders, scrubSecrets } from '../core/scrub.js';

/** What `onRequest` sees of an attempt about to be sent. */
export interface RequestHookInfo {
  /** `GET`, `POST` … */
  readonly method: string;
  /** The full URL, query included. */
  readonly url: string;
  /** The route template (`/posts/{id}`). */
  readonly route: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** The request headers, without `authorization`, `proxy-authorization` and `cookie`. */
  readonly headers: Readonly<Record<string, string>>;
}

/** What `onResponse` sees of an answer. */
export interface ResponseHookInfo {
  /** `GET`, `POST` … */
  readonly method: string;
  /** The full URL, query included. */
  readonly url: string;
  /** The route template (`/posts/{id}`). */
  readonly route: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The answer's headers, without `set-cookie`, and with the call's token cut out of any value. */
  readonly headers: Readonly<Record<string, string>>;
  /** `x-request-id`, when the service sent one. */
  readonly requestId: string | undefined;
  /** From sending to the whole body read, in ms. */
  readonly durationMs: number;
}

/** What `onRetry` sees before the SDK waits and sends a call again. */
export interface RetryHookInfo {
  /** `GET`, `POST` … */
  readonly method: string;
  /** The route template (`/posts/{id}`). */
  readonly route: string;
  /** The attempt about to be made: 2 for the first retry. */
  readonly attempt: number;
  /** How long the SDK waits before it, in ms (the service's `Retry-After`, or the backoff). */
  readonly delayMs: number;
  /** Why: an HTTP status (`status` set), a time-out, or a connection failure. */
  readonly reason: 'status' | 'timeout' | 'connection';
  /** The HTTP status that caused the retry, when `reason` is `status`. */
  readonly status: number | undefined;
}

/** The hook options of `PostSchedOptions`. */
export interface Hooks {
  /** Called before each attempt is sent. */
  onRequest?: ((info: RequestHookInfo) => void) | undefined;
  /** Called when an attempt got an answer (any status), after its body was read. */
  onResponse?: ((info: ResponseHookInfo) => void) | undefined;
  /** Called before a retry, with the wait. */
  onRetry?: ((info: RetryHookInfo) => void) | undefined;
}

/** Calls `hook` (when set) with `info`; a throw or a rejection is swallowed: observing a call never changes it. */
export function callHook<T>(hook: ((info: T) => unknown) | undefined, info: () => T): void {
  if (hook === undefined) return;
  try {
    const result = hook(Object.freeze(info())) as { then?: unknown } | undefined;
    if (typeof result?.then === 'function') (result as Promise<unknown>).then(undefined, () => undefined);
  } catch {
    // a hook's failure is its own
  }
}

/** Credentials in either direction: never shown to a hook. */
const HIDDEN = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/**
 * Headers as a frozen plain object, without credentials (`authorization`, `proxy-authorization`, `cookie`,
 * `set-cookie`), and with the call's token cut out of any other value (a server may echo it back).
 */
export function headersView(headers: Headers, token: string): Readonly<Record<string, string>> {
  const view: Record<string, string> = {};
  scrubHeaders(headers, [token]).forEach((value, name) => {
    if (!HIDDEN.has(name)) view[name] = value;
  });
  return Object.freeze(view);
}

/** `x-request-id` of an answer, without any token the server echoed into it. */
export function requestIdOf(response: Response, tokens: readonly string[]): string | undefined {
  const id = response.headers.get('x-request-id');
  return id === null ? undefined : scrubSecrets(id, tokens);
}

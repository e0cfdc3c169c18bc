/**
 * The one time toolkit: every wait the SDK makes. A time bound for every call the SDK waits on and does not control
 * (a webhook handler or dedupe store call, a token store call, `onTokens`, a token store's lock, a token request, a
 * Redis command or PostgreSQL statement), the wait for a token and between attempts, and `sleep`.
 */

/**
 * `promise` (none: nothing but the wait), or after `ms` what `onTime` gives; the caller's abort (`signal`) ends the
 * wait at once, rejecting with its reason. No timer or listener is left behind; the promise itself runs on (a result
 * that comes later is dropped). `unref`: for a wait nobody answers on, the timer does not keep the process alive
 * (Node, Bun, Deno).
 */
export function within<T>(promise: PromiseLike<T> | undefined, ms: number, signal: AbortSignal | undefined, onTime: () => T | Promise<T>, unref = false): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const settle = <V>(finish: (value: V) => void, value: V) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      finish(value);
    };
    const onAbort = () => settle(reject, signal!.reason);
    const timer = setTimeout(() => settle(resolve, onTime()), ms);
    if (unref) (timer as { unref?: () => void }).unref?.();
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort);
    promise?.then(
      (value) => settle(resolve, value),
      (error: unknown) => settle(reject, error),
    );
  });
}

/** Resolves after `ms`; an abort of `signal` rejects at once with its reason. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return within(undefined, ms, signal, () => undefined);
}

/**
 * `work()`'s result, or a rejection with `timedOut()` once `ms` have passed, whichever comes first. The work is
 * not stopped (JavaScript cannot stop it): a result that comes later is dropped. A result that is not a promise
 * (an in-memory store, a synchronous handler) is returned as it is, with no timer; a synchronous throw is thrown.
 * `unref`: for a wait nobody answers on, the timer does not keep the process alive (Node, Bun, Deno).
 */
export function timeBound<T>(work: () => T, ms: number, timedOut: () => Error, unref = false): T | Promise<Awaited<T>> {
  const result = work();
  if (typeof (result as PromiseLike<unknown> | null)?.then !== 'function') return result;
  return within(result as PromiseLike<Awaited<T>>, ms, undefined, () => Promise.reject(timedOut()), unref);
}

/**
 * One time bound for every call the SDK waits on and does not control: a webhook handler or dedupe store call, a token
 * store call, `onTokens`, a token store's lock, a token request.
 */

/**
 * `work()`'s result, or a rejection with `timedOut()` once `ms` have passed, whichever comes first. The work is
 * not stopped (JavaScript cannot stop it): a result that comes later is dropped. A result that is not a promise
 * (an in-memory store, a synchronous handler) is returned as it is, with no timer; a synchronous throw is thrown.
 * `unref`: for a wait nobody answers on, the timer does not keep the process alive (Node, Bun, Deno).
 */
export function timeBound<T>(work: () => T, ms: number, timedOut: () => Error, unref = false): T | Promise<Awaited<T>> {
  const result = work();
  if (typeof (result as PromiseLike<unknown> | null)?.then !== 'function') return result;
  return new Promise<Awaited<T>>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut()), ms);
    if (unref) (timer as { unref?: () => void }).unref?.();
    (result as PromiseLike<Awaited<T>>).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

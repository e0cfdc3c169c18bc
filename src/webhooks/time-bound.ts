/** One time bound for every step of handling a delivery that the SDK does not control: a handler, a store call. */

/**
 * `work()`'s result, or a rejection with `timedOut()` once `ms` have passed, whichever comes first. The work is
 * not stopped (JavaScript cannot stop it): a result that comes later is dropped.
 */
export function timeBound<T>(work: () => T, ms: number, timedOut: () => Error): Promise<Awaited<T>> {
  return new Promise<Awaited<T>>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut()), ms);
    Promise.resolve()
      .then(work as () => Awaited<T>)
      .then(
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

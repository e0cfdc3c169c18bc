import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full GC now, in any process (with --expose-gc or without: V8's flag set at run time gives a `gc` to a new
 * context). A timed round starts with it so that no contender pays for the garbage the previous one left.
 */
export const collectGarbage: () => void =
  (globalThis as { gc?: () => void }).gc ?? (setFlagsFromString('--expose-gc'), runInNewContext('gc') as () => void);

/**
 * heapUsed once the garbage is gone, for the measures whose children run with --expose-gc. Several full GCs with
 * event-loop turns between them: objects held by FinalizationRegistry cells (undici registers every Request that
 * has a signal) are freed only after their clean-up task ran, so a single GC reads them as retained.
 */
export async function settledHeap(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().heapUsed;
}

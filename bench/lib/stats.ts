/** Small statistics for benchmark samples. */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error('percentile of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/**
 * Runs `fn` repeatedly for about `durationMs` (after a warm-up of a tenth of that) and returns operations per
 * second. `fn` returns how many operations it did, so batched loops are counted right.
 */
export async function opsPerSecond(fn: () => number | Promise<number>, durationMs: number): Promise<number> {
  const until = (ms: number) => performance.now() + ms;
  for (const end = until(durationMs / 10); performance.now() < end; ) await fn();
  let ops = 0;
  const start = performance.now();
  for (const end = start + durationMs; performance.now() < end; ) ops += await fn();
  return (ops * 1000) / (performance.now() - start);
}

/** Interleaves contenders round by round so that drift on a shared machine hits all of them alike. */
export async function interleaved<K extends string>(
  contenders: Record<K, () => number | Promise<number>>,
  { rounds, roundMs }: { rounds: number; roundMs: number },
): Promise<Record<K, number>> {
  const names = Object.keys(contenders) as K[];
  const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < rounds; round++) {
    for (const name of names) samples[name].push(await opsPerSecond(contenders[name], roundMs));
  }
  return Object.fromEntries(names.map((n) => [n, median(samples[n])])) as Record<K, number>;
}

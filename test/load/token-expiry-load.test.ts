/**
 * Load with expiring tokens: many calls at once against the fake on loopback while the fake's clock expires
 * the access token again and again. The SDK's clock does not move: it learns of each expiry from the 401s,
 * and every call refused with the same token must share one refresh.
 *
 * In `npm test`: 1,000 calls, 50 at a time, 4 expiries. `npm run test:load`: 10,000 calls, 100 at a time,
 * 10 expiries (vitest.load.config.ts sets POSTSCHED_LOAD=full).
 */
import { describe, expect, it } from 'vitest';
import { runLoad, type LoadPlan } from './load-run.js';

const FULL = process.env['POSTSCHED_LOAD'] === 'full';
const PLAN: LoadPlan = FULL ? { requests: 10_000, concurrency: 100, expiries: 10 } : { requests: 1_000, concurrency: 50, expiries: 4 };
/**
 * Heap growth allowed across the run, after a forced GC: room for the fake's own bookkeeping (it keeps every
 * token pair it issued) and V8's noise (about 0.2 MB measured per 1,000 calls), while keeping 2 KB per call
 * would break it at 1,000 calls and 200 bytes per call at 10,000.
 */
const HEAP_BOUND_BYTES = 2 * 1024 * 1024;

describe('under load, with access tokens expiring during the run', () => {
  it(`completes ${PLAN.requests.toLocaleString('en')} calls at concurrency ${PLAN.concurrency} with no failure, one refresh per expiry, and no heap growth`, async () => {
    const result = await runLoad(PLAN);
    console.log(
      `load: ${result.requests} calls at concurrency ${PLAN.concurrency} in ${Math.round(result.durationMs)} ms, ` +
        `${result.failed} failed, ${result.expiries} expiries, ${result.refreshes} refreshes, ` +
        `heap ${mb(result.heapBefore)} → ${mb(result.heapAfter)} MB after GC`,
    );
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.expiries).toBe(PLAN.expiries);
    expect(result.refreshes).toBe(PLAN.expiries);
    expect(result.heapAfter - result.heapBefore).toBeLessThan(HEAP_BOUND_BYTES);
  });
});

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

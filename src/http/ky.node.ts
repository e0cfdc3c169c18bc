/**
 * `#ky` under Node, Bun and Deno (package.json "imports" → "node"): ky loaded on the first request instead of at
 * `import '@postsched/sdk'`. ky probes `new Request(…)` and `FormData` when it loads, and in Node that first touch
 * loads and compiles Node's whole fetch implementation (undici: 40–45 ms of a cold start, bench/RESULTS.md "Cold
 * import"). A process that imports the SDK and has not made a call yet does not pay it; the first call pays what it
 * would pay anyway. Web builds get ky.ts, loaded with the SDK, so that every bundler makes one file.
 */
import type * as Loaded from './ky.js';

// Live bindings: request.ts reads them on every call, and awaits `loadKy()` only while `ky` is undefined.
export let ky: typeof Loaded.ky | undefined;
export let isHTTPError: typeof Loaded.isHTTPError;
export let isTimeoutError: typeof Loaded.isTimeoutError;

let loading: Promise<void> | undefined;

export const loadKy = (): Promise<void> =>
  (loading ??= import('./ky.js').then((loaded) => {
    ({ isHTTPError, isTimeoutError } = loaded);
    ky = loaded.ky;
  }));

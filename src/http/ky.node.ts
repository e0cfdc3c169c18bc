/**
 * `#ky` under Node, Bun and Deno (package.json "imports" → "node"): ky evaluated on the first request instead of at
 * `import '@postsched/sdk'`. ky probes `new Request(…)` and `FormData` when it loads, and in Node that first touch
 * loads and compiles Node's whole fetch implementation (undici: 40–45 ms of a cold start, bench/RESULTS.md "Cold
 * import"). A process that imports the SDK and has not made a call yet does not pay it.
 *
 * The `require` below is resolved by the build, not at run time: esbuild bundles ky into this file inside a lazy
 * initialiser, so the first request runs ky's module body synchronously, with no file I/O. A test that drives time
 * with fake timers (vitest, jest, sinon) therefore sees the first call go out like any other: a dynamic `import()`
 * here waited on the disk, which a fake clock does not drive. Any bundler that takes this file gets one file too.
 * Web builds get ky.ts, evaluated with the SDK. (The test suite runs the sources, where `#ky` is ky.ts.)
 */
import type * as Loaded from './ky.js';

// Live bindings: request.ts reads them on every call, and calls `loadKy()` only while `ky` is undefined.
export let ky: typeof Loaded.ky | undefined;
export let isTimeoutError: typeof Loaded.isTimeoutError;

/** Evaluates ky (once) and sets the bindings above. Synchronous: no promise, no I/O. */
export const loadKy = (): void => {
  ({ ky, isTimeoutError } = require('./ky.js') as typeof Loaded);
};

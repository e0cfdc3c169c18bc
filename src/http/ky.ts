/**
 * ky, loaded on the first request instead of at `import '@postsched/sdk'`. ky's module probes
 * `new Request(…)` when it loads (to detect request-stream support), and in Node that first touch of `Request`
 * loads and compiles Node's whole fetch implementation: deferring it takes that off every cold start of an
 * app that imports the SDK (bench: cold import), at the cost of nothing the first request would not pay anyway.
 */
export type KyModule = typeof import('ky');

/** The type guards the retry rules and the error mapping use, taken from the loaded module. */
export type KyGuards = Pick<KyModule, 'isHTTPError' | 'isTimeoutError'>;

let loading: Promise<KyModule> | undefined;
let loaded: KyModule | undefined;

export function loadKy(): Promise<KyModule> {
  return (loading ??= import('ky').then((module) => (loaded = module)));
}

/** ky once loaded, so that calls after the first do not wait a microtask for it. */
export function loadedKy(): KyModule | undefined {
  return loaded;
}

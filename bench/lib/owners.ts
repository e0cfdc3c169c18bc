/**
 * Who owns a piece of code that a CPU profile sampled: the SDK, ky, Node's fetch (undici), the rest of Node, the
 * engine's natives, the garbage collector. The cpu-profile measure sums self time per owner.
 */
export type Owner = 'sdk' | 'ky' | 'undici' | 'node' | 'native' | 'gc' | 'bench' | 'idle';

export const OWNER_NAMES: Record<Owner, string> = {
  sdk: '@postsched/sdk (its own code in dist/)',
  ky: 'ky',
  undici: "Node's fetch (undici, its llhttp parser)",
  node: 'Node internals (web streams, AbortSignal, events, timers, sockets)',
  native: 'engine natives (JSON.parse, string decoding, socket writes, microtasks)',
  gc: 'garbage collector',
  bench: 'the benchmark loop',
  idle: 'idle (waiting for the server)',
};

/**
 * The owner of a profiled function, from its script URL. ky is bundled into dist/ (tsup.config.ts `noExternal`): its
 * chunk is the one tsup names after ky's `distribution/` folder; `ky alone` loads it from node_modules.
 */
export function ownerOf(url: string, functionName: string): Owner {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === '(idle)') return 'idle';
    return 'native';
  }
  if (url.includes('/node_modules/ky/') || /\/dist\/distribution-[^/]*\.js$/.test(url)) return 'ky';
  if (url.includes('/dist/')) return 'sdk';
  if (url.startsWith('node:internal/deps/undici') || url.startsWith('wasm:')) return 'undici';
  if (url.startsWith('node:')) return 'node';
  return 'bench';
}

/**
 * Who owns a piece of code that a CPU profile sampled: the SDK, ky, Node's fetch (undici), the rest of Node, the
 * engine's natives, the garbage collector. The cpu-profile measure sums self time per owner.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
 * The owner of a profiled function, from its script URL and line (0-based, as V8 reports it). ky is bundled into
 * dist/ (tsup.config.ts `noExternal`), inside the SDK's chunk since issue 22 (no lazy import any more): the lines of a
 * dist/ file are told apart by the `// node_modules/…` and `// src/…` comments tsup writes before each module's code
 * (`moduleOf`); `ky alone` loads ky from node_modules.
 */
export function ownerOf(url: string, functionName: string, lineNumber = -1): Owner {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === '(idle)') return 'idle';
    return 'native';
  }
  if (url.includes('/node_modules/ky/') || /\/dist\/distribution-[^/]*\.js$/.test(url)) return 'ky';
  if (url.includes('/dist/')) return moduleOf(url, lineNumber).startsWith('node_modules/ky/') ? 'ky' : 'sdk';
  if (url.startsWith('node:internal/deps/undici') || url.startsWith('wasm:')) return 'undici';
  if (url.startsWith('node:')) return 'node';
  return 'bench';
}

/** Per dist/ file: the line each module of the bundle starts on, and its path, from tsup's `// path` comments. */
const sections = new Map<string, Array<[number, string]>>();

/** The module (`src/http/request.ts`, `node_modules/ky/distribution/core/Ky.js`) a line of a bundled file came from. */
function moduleOf(url: string, lineNumber: number): string {
  let starts = sections.get(url);
  if (starts === undefined) {
    starts = [];
    const lines = readFileSync(fileURLToPath(url), 'utf8').split('\n');
    lines.forEach((line, index) => {
      const path = /^\/\/ ((?:src|node_modules)\/\S+)$/.exec(line)?.[1];
      if (path !== undefined) starts!.push([index, path]);
    });
    sections.set(url, starts);
  }
  let found = '';
  for (const [start, path] of starts) {
    if (start > lineNumber) break;
    found = path;
  }
  return found;
}

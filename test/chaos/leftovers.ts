/**
 * Node-only test support: what a suite leaves behind. `process.getActiveResourcesInfo()` lists the live
 * handles and timers by type; a suite that ends with more `TCPSocketWrap` or `Timeout` entries than it
 * started with left a socket or a timer running.
 *
 * Keep-alive: Node's global `fetch` pools idle connections in its global undici Agent and closes them after
 * its keep-alive time-out (about 4 s). That pool belongs to Node and is shared by every `fetch` user in the
 * process; the SDK neither creates nor owns it, so its idle sockets are not the SDK's leftovers. To still
 * prove that the SDK leaves nothing (no request in flight, no unread body holding a socket), a suite gives
 * the client a `fetch` bound to a pool of its own and closes that pool before counting: `close()` waits
 * for every request in flight, so it only returns in time if the SDK ended all of them.
 */

const WATCHED = ['TCPSocketWrap', 'Timeout'] as const;
export type ResourceCounts = Record<(typeof WATCHED)[number], number>;

export function activeResources(): ResourceCounts {
  const info = process.getActiveResourcesInfo();
  return Object.fromEntries(WATCHED.map((type) => [type, info.filter((t) => t === type).length])) as ResourceCounts;
}

/** Waits (real I/O turns, at most `maxMs`) until no watched resource outnumbers `baseline`; returns the last count. */
export async function settleResources(baseline: ResourceCounts, maxMs = 3_000): Promise<ResourceCounts> {
  const deadline = performance.now() + maxMs;
  let now = activeResources();
  while (WATCHED.some((type) => now[type] > baseline[type]) && performance.now() < deadline) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    now = activeResources();
  }
  return now;
}

interface Dispatcher {
  close(): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * A connection pool of the test's own, of the same class as Node's global one (undici's `Agent`, reached
 * through the global dispatcher because Node 20 does not export it), and a `fetch` that uses it.
 */
export async function privatePool(): Promise<{ fetch: (input: Request, init?: RequestInit) => Promise<Response>; close(): Promise<void> }> {
  await fetch('data:,'); // makes Node create its global dispatcher, without opening any socket
  const global = (globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')] as {
    constructor: new (options?: object) => Dispatcher;
  };
  const agent = new global.constructor();
  return {
    fetch: (input, init) => fetch(input, { ...init, dispatcher: agent } as RequestInit),
    close: () => agent.close(),
  };
}

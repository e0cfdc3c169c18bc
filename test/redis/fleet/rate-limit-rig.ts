/**
 * The rate-limit fleet (issue "one backoff per user across every process"): `processes` workers
 * (rate-limit-worker.ts), each calling `callsPerUser` times per user, against one loopback service that allows each
 * user `limit` requests per `windowMs` window (a window starts at the user's first request after the last one
 * ended). Within it the service answers 200 with `RateLimit-Limit/-Remaining/-Reset`; beyond it 429 with
 * `Retry-After` (whole seconds to the window's end, rounded up) — or, with `headers: false`, both without any
 * rate-limit header. It counts, per user and window, the 429s, and the requests that arrived while a 429 it answered
 * had told the user to wait ("while blocked").
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startWorkerFile, type Worker } from '../multi-process/fleet.js';
import type { RateLimitWorkerConfig, RateLimitWorkerResult } from './rate-limit-worker.js';

const WORKER = fileURLToPath(new URL('./rate-limit-worker.ts', import.meta.url));

export interface RateLimitFleetOptions {
  redisUrl: string;
  users: number;
  processes?: number;
  callsPerUser?: number;
  concurrency?: number;
  limit?: number;
  windowMs?: number;
  /** false: the service sends no Retry-After and no RateLimit-* at all. */
  headers?: boolean;
  limiter?: RateLimitWorkerConfig['limiter'];
  sdk?: string;
}

export interface RateLimitFleetResult {
  succeeded: number;
  failed: Record<string, number>;
  requests: number;
  /** 429s per user per window, all processes together: the largest, the mean over windows that had any request. */
  max429PerWindow: number;
  mean429PerWindow: number;
  /** Requests that reached the service while a 429 it answered told their user to wait. */
  arrivedWhileBlocked: number;
  /** From `go` to the last worker's `done`. */
  wallMs: number;
  /** calls per user ÷ limit × window: the shortest time the limit allows. */
  floorMs: number;
}

interface UserState {
  windowEnd: number;
  count: number;
  blockedUntil: number;
  /** 429s of each window so far. */
  windows: number[];
}

export interface RateLimitFleet {
  run(): Promise<RateLimitFleetResult>;
  stop(): Promise<void>;
}

export async function startRateLimitFleet(options: RateLimitFleetOptions): Promise<RateLimitFleet> {
  const { users: userCount, processes = 4, callsPerUser = 15, concurrency = 50, limit = 10, windowMs = 2_000, headers = true } = options;
  const state = new Map<string, UserState>();
  let requests = 0;
  let arrivedWhileBlocked = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    const token = req.headers.authorization ?? '';
    const now = Date.now();
    let user = state.get(token);
    if (user === undefined) state.set(token, (user = { windowEnd: 0, count: 0, blockedUntil: 0, windows: [] }));
    if (now < user.blockedUntil) arrivedWhileBlocked++;
    if (now >= user.windowEnd) {
      user.windowEnd = now + windowMs;
      user.count = 0;
      user.windows.push(0);
    }
    user.count++;
    const resetS = Math.ceil((user.windowEnd - now) / 1000);
    const rateHeaders: Record<string, string> = headers ? { 'ratelimit-limit': String(limit), 'ratelimit-remaining': String(Math.max(0, limit - user.count)), 'ratelimit-reset': String(resetS) } : {};
    if (user.count > limit) {
      user.windows[user.windows.length - 1]!++;
      if (headers) user.blockedUntil = Math.max(user.blockedUntil, now + resetS * 1000);
      res.writeHead(429, { 'content-type': 'application/json', ...rateHeaders, ...(headers ? { 'retry-after': String(resetS) } : {}) });
      res.end('{"error":{"code":"rate_limited","message":"slow down"}}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', ...rateHeaders });
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const ids = Array.from({ length: userCount }, (_, i) => `user_${i}`);
  const workers: Array<Worker<{ type: 'ready' } | RateLimitWorkerResult, { type: 'go' | 'exit' }>> = Array.from({ length: processes }, () =>
    startWorkerFile(WORKER, {
      baseUrl,
      redisUrl: options.redisUrl,
      users: ids,
      callsPerUser,
      concurrency,
      limiter: options.limiter ?? 'redis',
      sdk: options.sdk ?? 'src',
    } satisfies RateLimitWorkerConfig),
  );
  await Promise.all(workers.map((w) => w.next('ready')));
  return {
    async run() {
      const start = performance.now();
      for (const w of workers) w.send({ type: 'go' });
      const results = await Promise.all(workers.map((w) => w.next('done')));
      const wallMs = performance.now() - start;
      const windows = [...state.values()].flatMap((u) => u.windows);
      const failed: Record<string, number> = {};
      for (const r of results) for (const [name, n] of Object.entries(r.failed)) failed[name] = (failed[name] ?? 0) + n;
      return {
        succeeded: results.reduce((sum, r) => sum + r.succeeded, 0),
        failed,
        requests,
        max429PerWindow: Math.max(0, ...windows),
        mean429PerWindow: windows.length === 0 ? 0 : windows.reduce((a, b) => a + b, 0) / windows.length,
        arrivedWhileBlocked,
        wallMs,
        floorMs: ((processes * callsPerUser) / limit) * windowMs,
      };
    },
    async stop() {
      await Promise.all(workers.map((w) => w.stop()));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Every call ends, on a hostile network: real sockets on 127.0.0.1 (test/chaos/chaos-server.ts), not msw.
 * For each misbehaviour, reads (posts.get, accounts.list) and writes (posts.create without and with an
 * idempotency key) end within timeout × (retries + 1) plus the backoff, in success or in the one typed
 * error a user should get; no promise rejection goes unhandled; no POST without an idempotency key is
 * acted on twice; and nothing is left running afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectionError,
  InternalServerError,
  PostSched,
  PostSchedError,
  RateLimitError,
  ResponseValidationError,
  TimeoutError,
} from '@postsched/sdk';
import { CHAOS_MODES, startChaosServer, type ChaosMode, type ChaosServer } from './chaos-server.js';
import { activeResources, privatePool, settleResources, type ResourceCounts } from './leftovers.js';

/**
 * Per-attempt time-out. Small, so that the stalled modes end quickly, but not smaller: about sixty calls
 * start together on a machine shared with other test runs, and at 300 ms a first connection sometimes did
 * not even reach the server in time, turning an expected reset into a time-out.
 */
const TIMEOUT_MS = 1_000;
const MAX_RETRIES = 2;
/** Room for a loaded machine (2 cores, several test runs): this bounds hanging, it does not measure speed. */
const SLACK_MS = 5_000;

type ErrorClass = abstract new (...args: never[]) => PostSchedError;
type Outcome = 'success' | ErrorClass;
type CallName = 'posts.get' | 'accounts.list' | 'posts.create' | 'posts.create with idempotencyKey';

interface Expected {
  /** What reads and keyed writes end in. */
  outcome: Outcome;
  /** What a POST without an idempotency key ends in, when it differs. */
  unkeyedWrite?: Outcome;
  /** Requests the server sees for a read or a keyed write, and for an unkeyed write. */
  requests: number;
  unkeyedRequests: number;
  /** The wait the server asks for (Retry-After), in ms. */
  retryAfterMs?: number;
  /** Per-attempt time-out for this mode, when the default does not fit. */
  timeoutMs?: number;
}

const ALL = MAX_RETRIES + 1;

/**
 * What a user gets, per misbehaviour:
 * - no answer, or an answer cut off (reset, body shorter than announced) → `ConnectionError`;
 * - no answer in time, whether nothing comes or the body trickles forever → `TimeoutError`;
 * - a complete 2xx answer whose body is not the JSON promised (cut-off JSON, empty, HTML) →
 *   `ResponseValidationError`, with the raw body on `error.body`: the service did answer, so it is not a
 *   network failure, and for a write it may have acted;
 * - an HTML error page from a proxy → the status's class (`InternalServerError` for 502);
 * - 429 after the retries, or with a wait beyond `maxRetryAfterMs` → `RateLimitError`.
 * Reads and keyed writes are retried after failures that may be temporary; an unkeyed POST only after a
 * 429 (the service did not act), never after a time-out, a reset or a 5xx (Assumptions table, "Retries of
 * writes").
 */
const EXPECTED: Record<ChaosMode, Expected> = {
  'reset-before-headers': { outcome: ConnectionError, requests: ALL, unkeyedRequests: 1 },
  'stall-before-headers': { outcome: TimeoutError, requests: ALL, unkeyedRequests: 1 },
  'reset-mid-body': { outcome: ConnectionError, requests: ALL, unkeyedRequests: 1 },
  'short-body': { outcome: ConnectionError, requests: ALL, unkeyedRequests: 1 },
  'stall-after-headers': { outcome: TimeoutError, requests: ALL, unkeyedRequests: 1 },
  'slow-drip': { outcome: TimeoutError, requests: ALL, unkeyedRequests: 1 },
  'truncated-json': { outcome: ResponseValidationError, requests: 1, unkeyedRequests: 1 },
  'empty-body': { outcome: ResponseValidationError, requests: 1, unkeyedRequests: 1 },
  'html-502': { outcome: InternalServerError, requests: ALL, unkeyedRequests: 1 },
  'wrong-content-type': { outcome: ResponseValidationError, requests: 1, unkeyedRequests: 1 },
  // 10 MB must not trip a 300 ms time-out on a loaded machine: this mode is about size, not time.
  'huge-json': { outcome: 'success', requests: 1, unkeyedRequests: 1, timeoutMs: 10_000 },
  'rate-limit-storm': { outcome: RateLimitError, requests: ALL, unkeyedRequests: ALL, retryAfterMs: 0 },
  'rate-limit-wait': { outcome: RateLimitError, requests: ALL, unkeyedRequests: ALL, retryAfterMs: 1_000 },
  'rate-limit-too-long': { outcome: RateLimitError, requests: 1, unkeyedRequests: 1, retryAfterMs: 3_600_000 },
  'flapping-503': { outcome: 'success', unkeyedWrite: InternalServerError, requests: 2, unkeyedRequests: 1 },
  ok: { outcome: 'success', requests: 1, unkeyedRequests: 1 },
};

/** timeout × (retries + 1) plus every backoff wait (ky's: 0.5 s doubling, or the Retry-After it honours). */
function hangBoundMs(timeoutMs: number, retryAfterMs = 0): number {
  let backoff = 0;
  for (let retry = 1; retry <= MAX_RETRIES; retry++) {
    backoff += Math.max(Math.min(500 * 2 ** (retry - 1), 8_000), retryAfterMs <= 60_000 ? retryAfterMs : 0);
  }
  return timeoutMs * (MAX_RETRIES + 1) + backoff + SLACK_MS;
}

const unhandled: unknown[] = [];
const collect = (reason: unknown) => unhandled.push(reason);
let server: ChaosServer;
let pool: Awaited<ReturnType<typeof privatePool>>;
let baseline: ResourceCounts;

beforeAll(async () => {
  process.on('unhandledRejection', collect);
  pool = await privatePool();
  server = await startChaosServer();
  baseline = activeResources();
});

afterAll(async () => {
  process.off('unhandledRejection', collect);
  await server?.close();
});

const NEW_POST = { account_ids: ['acc_1'], publish_at: '2030-01-01T00:00:00Z', text: 'chaos' };

/** The calls made against each misbehaviour: two reads, and a write without and with an idempotency key. */
const CALLS: Array<{ name: CallName; method: string; route: string; run: (client: PostSched) => Promise<unknown> }> = [
  { name: 'posts.get', method: 'GET', route: '/posts/post_1', run: (client) => client.posts.get('post_1') },
  { name: 'accounts.list', method: 'GET', route: '/accounts', run: (client) => client.accounts.list().toArray() },
  { name: 'posts.create', method: 'POST', route: '/posts', run: (client) => client.posts.create(NEW_POST) },
  {
    name: 'posts.create with idempotencyKey',
    method: 'POST',
    route: '/posts',
    run: (client) => client.posts.create(NEW_POST, { idempotencyKey: 'idem_chaos_1' }),
  },
];

/**
 * The misbehaviours run side by side (the suite would take half a minute one after the other), except the
 * 10 MB body: the server and the client share this process, and building and parsing 10 MB blocks it long
 * enough to time out the others' attempts.
 */
const SIDE_BY_SIDE = CHAOS_MODES.filter((mode) => mode !== 'huge-json');

describe.concurrent('on a hostile network, every call ends in success or a typed error', () => {
  for (const mode of SIDE_BY_SIDE) defineModeTest(mode);
});

describe('with a 10 MB answer', () => {
  defineModeTest('huge-json');
});

function defineModeTest(mode: ChaosMode): void {
    const expected = EXPECTED[mode];
    it(`${mode}: ${describeOutcome(expected.outcome)}${expected.unkeyedWrite ? `, an unkeyed POST ${describeOutcome(expected.unkeyedWrite)}` : ''}`, async ({ expect }) => {
      const timeoutMs = expected.timeoutMs ?? TIMEOUT_MS;
      const bound = hangBoundMs(timeoutMs, expected.retryAfterMs);
      const results = await Promise.all(
        CALLS.map(async ({ name, method, route, run }, index) => {
          // One tag per call keeps each call's request count (and the 503 flapping) apart.
          const baseUrl = server.url(mode, `call${index}`);
          const client = new PostSched({ baseUrl, auth: 'tok_chaos', timeoutMs, maxRetries: MAX_RETRIES, fetch: pool.fetch });
          const started = performance.now();
          const outcome = await run(client).then(
            () => 'success' as const,
            (error: unknown) => error,
          );
          const elapsed = performance.now() - started;
          const path = new URL(`${baseUrl}${route}`).pathname;
          return { name, method, outcome, elapsed, requests: server.count(method, path), acted: server.acted(method, path) };
        }),
      );
      for (const { name, method, outcome, elapsed, requests, acted } of results) {
        const unkeyed = name === 'posts.create';
        const want = unkeyed ? (expected.unkeyedWrite ?? expected.outcome) : expected.outcome;
        expect(elapsed, `${name} ended within its bound`).toBeLessThan(bound);
        if (want === 'success') expect(outcome, name).toBe('success');
        else {
          expect(outcome, `${name} → ${String(outcome)}`).toBeInstanceOf(want);
          expect((outcome as Error).constructor, name).toBe(want);
        }
        expect(requests, `${name}: requests the server saw`).toBe(unkeyed ? expected.unkeyedRequests : expected.requests);
        // The rule users rely on: a POST without an idempotency key is never acted on twice.
        if (unkeyed && method === 'POST') expect(acted, `${name}: requests acted on`).toBeLessThanOrEqual(1);
      }
    });
}

describe('after the hostile network', () => {
  it('leaves no unhandled rejection, no answer in flight, and no socket or timer running', async () => {
    expect(unhandled).toEqual([]);
    // Every stalled or dripping answer was abandoned by the client (its socket closed), so none is open.
    const deadline = performance.now() + 3_000;
    while (server.openAnswers() > 0 && performance.now() < deadline) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(server.openAnswers()).toBe(0);
    // Closing the pool returns only once no request is in flight; then its idle keep-alive sockets are gone.
    let guard: ReturnType<typeof setTimeout> | undefined;
    const closed = await Promise.race([
      pool.close().then(() => true),
      new Promise<false>((resolve) => (guard = setTimeout(resolve, 5_000, false))),
    ]);
    clearTimeout(guard);
    expect(closed, 'the connection pool closed: no request was left in flight').toBe(true);
    const after = await settleResources(baseline);
    expect(after.TCPSocketWrap).toBeLessThanOrEqual(baseline.TCPSocketWrap);
    expect(after.Timeout).toBeLessThanOrEqual(baseline.Timeout);
  });
});

function describeOutcome(outcome: Outcome): string {
  return outcome === 'success' ? 'success' : `${outcome.name}`;
}

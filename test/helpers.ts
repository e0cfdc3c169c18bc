/** Shared test fixtures: the base URL, a counting token provider, wire objects. */
import { PostSched, type AccessTokenProvider } from '@postsched/sdk';

export const BASE = 'https://api.postsched.test/v1';

/** A token provider that counts calls; `forceRefresh` hands out the next token of the list. */
export class FakeTokenProvider implements AccessTokenProvider {
  getCalls = 0;
  refreshCalls: string[] = [];
  #tokens: string[];

  constructor(...tokens: string[]) {
    this.#tokens = tokens.length === 0 ? ['tok_1', 'tok_2'] : tokens;
  }

  get current(): string {
    return this.#tokens[0]!;
  }

  async getAccessToken(): Promise<string> {
    this.getCalls++;
    return this.current;
  }

  async forceRefresh(rejected: string): Promise<string> {
    this.refreshCalls.push(rejected);
    if (this.#tokens.length > 1 && rejected === this.#tokens[0]) this.#tokens.shift();
    return this.current;
  }
}

export function wirePost(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'post_1',
    account_ids: ['acc_1'],
    publish_at: '2030-01-01T09:00:00.000Z',
    status: 'scheduled',
    text: 'Hello',
    created_at: '2029-12-01T00:00:00.000Z',
    ...overrides,
  };
}

export const JSON_HEADERS = { 'content-type': 'application/json', 'x-request-id': 'req_test' };

/** Lets in-process I/O and promise jobs run without moving fake time (setImmediate is left real). */
export async function flushIO(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Settles a promise while advancing fake time in steps; returns the value or the error. */
export async function settle<T>(
  promise: Promise<T>,
  advance: (ms: number) => Promise<unknown>,
  stepMs = 500,
  maxSteps = 200,
): Promise<{ value?: T; error?: unknown }> {
  let outcome: { value?: T; error?: unknown } | undefined;
  promise.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  for (let step = 0; step < maxSteps && outcome === undefined; step++) {
    await flushIO(2);
    if (outcome === undefined) await advance(stepMs);
  }
  await flushIO(2);
  if (outcome === undefined) throw new Error('promise did not settle');
  return outcome;
}

/**
 * A client with a fixed token whose `fetch` records every Request it is handed and answers with `answer`:
 * for tests about what the pipeline gives fetch (headers, redirect mode, clones).
 */
export function recordingClient(answer: (request: Request) => Response | Promise<Response>): {
  client: PostSched;
  seen: Request[];
} {
  const seen: Request[] = [];
  const client = new PostSched({
    baseUrl: 'http://127.0.0.1:1',
    auth: 'tok_1',
    fetch: async (request) => {
      seen.push(request);
      return answer(request);
    },
  });
  return { client, seen };
}

/**
 * A service allowing `limit` requests per `windowMs` (a window from the first request after the last one ended), with
 * `RateLimit-Limit` (unless `stateLimit` is false), `-Remaining` and `-Reset` (whole seconds, rounded up); a 429 with
 * `Retry-After` beyond. Counts the requests of each window and the 429s.
 */
export function windowService({ limit = 10, windowMs = 2_000, stateLimit = true } = {}) {
  const windows: number[] = [];
  let end = 0;
  let refused = 0;
  const fetch = async () => {
    const now = Date.now();
    if (now >= end) {
      end = now + windowMs;
      windows.push(0);
    }
    const count = ++windows[windows.length - 1]!;
    const reset = String(Math.ceil((end - now) / 1000));
    const headers: Record<string, string> = { 'ratelimit-remaining': String(Math.max(0, limit - count)), 'ratelimit-reset': reset };
    if (stateLimit) headers['ratelimit-limit'] = String(limit);
    if (count <= limit) return Response.json(wirePost(), { headers });
    refused++;
    return Response.json({ error: { code: 'rate_limited', message: 'slow down' } }, { status: 429, headers: { ...headers, 'retry-after': reset } });
  };
  return { fetch, windows, refused: () => refused };
}

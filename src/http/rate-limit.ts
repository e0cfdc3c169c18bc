/**
 * Rate-limit state read from an answer's headers: `RateLimit-Limit` / `-Remaining` / `-Reset` (draft-ietf-httpapi-
 * ratelimit-headers, the field-per-value versions), the structured `RateLimit` / `RateLimit-Policy` of its later
 * versions (`"default";r=50;t=30`, `"default";q=100;w=60`), and the `X-RateLimit-*` headers many services send.
 * Every value comes from the server: only short, non-negative whole numbers are taken, anything else is left out.
 */

/** What an answer said about the rate limit; each field `undefined` when the service did not say. */
export interface RateLimitInfo {
  /** Requests allowed in the current window (`RateLimit-Limit`, the policy's `q`, `X-RateLimit-Limit`). */
  limit: number | undefined;
  /** Requests left in the current window (`RateLimit-Remaining`, `r`, `X-RateLimit-Remaining`). */
  remaining: number | undefined;
  /**
   * Milliseconds until the window resets (`RateLimit-Reset`, `t`, `X-RateLimit-Reset`), from delay-seconds or
   * from an epoch timestamp in seconds (a value past 2024, as GitHub sends).
   */
  resetMs: number | undefined;
}

const NUMBER = /^\d{1,15}$/;
const EPOCH_SECONDS_2024 = 1_704_067_200;

/** The rate-limit state of `headers`, or `undefined` when none of the headers is there. */
export function parseRateLimit(headers: Headers, now: number = Date.now()): RateLimitInfo | undefined {
  const structured = member(headers.get('ratelimit'));
  const policy = member(headers.get('ratelimit-policy'));
  const limit = whole(headers.get('ratelimit-limit')) ?? policy?.['q'] ?? whole(headers.get('x-ratelimit-limit'));
  const remaining = whole(headers.get('ratelimit-remaining')) ?? structured?.['r'] ?? whole(headers.get('x-ratelimit-remaining'));
  const reset = whole(headers.get('ratelimit-reset')) ?? structured?.['t'] ?? whole(headers.get('x-ratelimit-reset'));
  if (limit === undefined && remaining === undefined && reset === undefined) return undefined;
  const resetMs = reset === undefined ? undefined : reset >= EPOCH_SECONDS_2024 ? Math.max(0, reset * 1000 - now) : reset * 1000;
  return { limit, remaining, resetMs };
}

function whole(value: string | null): number | undefined {
  const text = value?.trim();
  return text !== undefined && NUMBER.test(text) ? Number(text) : undefined;
}

/** The parameters of the first member of a structured-field list: `"default";r=50;t=30` → `{ r: 50, t: 30 }`. */
function member(value: string | null): Record<string, number> | undefined {
  if (value === null || value.length > 500) return undefined;
  const first = value.split(',')[0] ?? '';
  const params: Record<string, number> = {};
  for (const part of first.split(';').slice(1)) {
    const [key, raw] = part.split('=');
    const number = whole(raw ?? null);
    if (key !== undefined && number !== undefined) params[key.trim()] = number;
  }
  return params;
}

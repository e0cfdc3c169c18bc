/**
 * Rate-limit state read from an answer's headers: `RateLimit-Limit` / `-Remaining` / `-Reset` (draft-ietf-httpapi-
 * ratelimit-headers, the field-per-value versions), its one-dictionary `RateLimit` (`limit=100, remaining=50, reset=30`),
 * the structured `RateLimit` / `RateLimit-Policy` of its later versions (`"default";r=50;t=30`, `"default";q=100;w=60`),
 * and the `X-RateLimit-*` headers many services send.
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
   * from an epoch timestamp in seconds (a value past 2024, as GitHub sends); `undefined` when more than a year away.
   */
  resetMs: number | undefined;
}

const NUMBER = /^\d{1,15}$/;
/** 2024-01-01T00:00:00Z in epoch seconds: from here on a number of seconds is read as a timestamp (`waitMsOf`). */
export const EPOCH_SECONDS_2024 = 1_704_067_200;
/** A window longer than a year is no rate limit anyone waits out: such a reset is left out, not believed. */
const MAX_RESET_MS = 31_622_400_000; // 366 days

/** The rate-limit state of `headers`, or `undefined` when none of the headers is there. */
export function parseRateLimit(headers: Headers, now: number = Date.now()): RateLimitInfo | undefined {
  const structured = params(headers.get('ratelimit'));
  const policy = params(headers.get('ratelimit-policy'));
  const limit = whole(headers.get('ratelimit-limit')) ?? policy?.['q'] ?? structured?.['limit'] ?? whole(headers.get('x-ratelimit-limit'));
  const remaining = whole(headers.get('ratelimit-remaining')) ?? structured?.['r'] ?? structured?.['remaining'] ?? whole(headers.get('x-ratelimit-remaining'));
  const reset = whole(headers.get('ratelimit-reset')) ?? structured?.['t'] ?? structured?.['reset'] ?? whole(headers.get('x-ratelimit-reset'));
  if (limit === undefined && remaining === undefined && reset === undefined) return undefined;
  const ms = reset === undefined ? undefined : waitMsOf(reset, now);
  return { limit, remaining, resetMs: ms !== undefined && ms <= MAX_RESET_MS ? ms : undefined };
}

/**
 * The one epoch rule of the SDK, for `Retry-After` and every reset header: a number of seconds is delay-seconds (RFC
 * 9110 §10.2.3, draft-ietf-httpapi-ratelimit-headers' `RateLimit-Reset` and `t`), in ms; from `EPOCH_SECONDS_2024`
 * on (a delay of 54 years, which no service means) it is an epoch timestamp in seconds, as `X-RateLimit-Reset`
 * (GitHub) and some `RateLimit-Reset` senders give it, and ky reads it: the ms from `now` to it, 0 when past.
 */
export function waitMsOf(seconds: number, now: number): number {
  return seconds >= EPOCH_SECONDS_2024 ? Math.max(0, seconds * 1000 - now) : seconds * 1000;
}

function whole(value: string | null): number | undefined {
  const text = value?.trim();
  return text !== undefined && NUMBER.test(text) ? Number(text) : undefined;
}

/**
 * The `key=number` pairs of a structured field, the first of each key kept: `"default";r=50;t=30, "day";r=900`
 * (later drafts: the first policy wins) → `{ r: 50, t: 30 }`; `limit=100, remaining=50, reset=30` (drafts up to
 * 06, one dictionary) → `{ limit: 100, remaining: 50, reset: 30 }`.
 */
function params(value: string | null): Record<string, number> | undefined {
  if (value === null || value.length > 500) return undefined;
  const found: Record<string, number> = {};
  for (const part of value.split(/[;,]/)) {
    const [key, raw] = part.split('=');
    const name = key!.trim();
    const number = whole(raw ?? null);
    if (number !== undefined && !(name in found)) found[name] = number;
  }
  return found;
}

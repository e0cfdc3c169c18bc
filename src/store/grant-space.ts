/**
 * What a token table (`PostgresTokenTable`) or a token space (`RedisTokenSpace`) is to `UserClients`: the maker of
 * every user's store, the list of its users' grants, and the sweep that keeps idle grants alive
 * (`UserClients.keepGrantsAlive`). The sweep's loop is here, once, over each store's claims of due grants.
 *
 * When a grant is due: each user has a slot in the window (`olderThanMs`) from a hash of their id (the first 32 bits
 * of the MD5 of the id, modulo the window: Postgres computes it in SQL, Redis in the process, alike); a grant is due
 * once the latest passing of its slot is later than its last refresh. So idle grants are refreshed once per window,
 * spread evenly over it (not all in the minute they were connected in), and none is older than the window plus the
 * time between two sweeps.
 */
import { checkOptions, integerOption, invalidOption, MAX_TIMEOUT_MS, optionNames } from '../core/invalid-option.js';
import type { ReauthorizationReason } from '../oauth/errors.js';
import type { TokenSet, TokenStore } from '../oauth/types.js';

/** A user's grant as the store holds it: what `users.grantStatus(userId)` returns. */
export interface GrantStatus {
  /**
   * `connected`: tokens are stored and usable as far as the store knows; `needs_reconnect`: the grant is dead (the
   * refresh token was refused), the user must go through the authorization flow and `connect` again; `none`: no tokens
   * are stored (never connected, or `disconnect`ed).
   */
  status: 'connected' | 'needs_reconnect' | 'none';
  /** Why the grant is dead (`needs_reconnect`): the `reason` of the `ReauthorizationRequiredError` that ended it. */
  reason?: ReauthorizationReason;
  /** Since when the grant is dead, in epoch milliseconds, where the store keeps it (every built-in store). */
  since?: number;
  /** When tokens were last written (a refresh or a connect), in epoch milliseconds, where the store keeps it (`PostgresTokenStore`, `MemoryTokenStore`). */
  refreshedAt?: number;
}

/** The states `grants()` lists (a user without tokens has no row or key to list). */
export type ListedStatus = Exclude<GrantStatus['status'], 'none'>;

/** Options of `grants()` on a `PostgresTokenTable` or a `RedisTokenSpace`. */
export interface GrantsOptions {
  /** Only the grants in this state. Default: every grant. */
  status?: ListedStatus;
  /** The page's size, 1 to 1 000. Default 100. */
  limit?: number;
  /** The `next` of the page before (keyset paging, in user-id order); absent: the first page. */
  after?: string | undefined;
}

/** One grant as `grants()` lists it: its user and its `GrantStatus`. Never a token. */
export interface GrantInfo extends GrantStatus {
  /** Your user's id (the store's `key`). */
  userId: string;
  /** The grant's state. */
  status: ListedStatus;
}

/** A page of `grants()`. */
export interface GrantPage {
  /** The grants, in user-id order. */
  grants: GrantInfo[];
  /** Pass it as `after` for the next page; absent on the last page. */
  next?: string;
}

/** Options of `UserClients.keepGrantsAlive`. */
export interface KeepGrantsAliveOptions {
  /**
   * The window, in ms: every grant not refreshed for this long is refreshed, each at its own moment in the window
   * (from a hash of the user's id), so a run every minute refreshes about `grants × 60 000 / olderThanMs` of them.
   * Pick it well inside the service's idle lifetime of a refresh token, e.g. 7 days for a 30-day one. At least 1 000.
   */
  olderThanMs: number;
  /** How many refreshes this call runs at once. Default 4. */
  concurrency?: number;
  /**
   * Stops the sweep: no grant is claimed after it aborts; the refreshes in flight finish (a refresh cut short could
   * lose the user's rotated refresh token), then the call resolves with the counts so far.
   */
  signal?: AbortSignal;
}

/** What `UserClients.keepGrantsAlive` did. */
export interface KeepGrantsAliveResult {
  /** Grants this call refreshed. */
  refreshed: number;
  /** Grants claimed but not refreshed by this call: another process (or a request) refreshed them first, or no tokens are stored. */
  skipped: number;
  /**
   * Grants whose refresh token the service refused during this call (`ReauthorizationRequiredError`): marked now.
   * Grants already marked are not swept (0 requests): list them with `grants({ status: 'needs_reconnect' })`.
   */
  dead: number;
  /** Grants whose refresh failed otherwise (the service or the store down, unreadable tokens): the next run tries again. */
  failed: number;
}

/** What the sweep does with one claimed grant, given the tokens read under the claim (`undefined`: none stored). */
export type KeepAlive = (userId: string, tokens: TokenSet | undefined) => Promise<'refreshed' | 'skipped' | 'dead'>;

/**
 * What `UserClients` accepts as its `store` besides a function: an object that makes each user's store and answers
 * questions about them all (`PostgresTokenTable`, `RedisTokenSpace`).
 */
export interface TokenSpace {
  /** The user's store: the same stored tokens each time. */
  store(userId: string): TokenStore;
  /** A page of the grants, in user-id order. */
  grants(options?: GrantsOptions): Promise<GrantPage>;
  /** @internal The sweep of `UserClients.keepGrantsAlive`, refreshing each claimed grant with `keepAlive`. */
  sweep?(keepAlive: KeepAlive, options: KeepGrantsAliveOptions): Promise<KeepGrantsAliveResult>;
}

/** A store's claims of due grants, for `sweepGrants`. */
export interface GrantClaims {
  /** The grants due now, not marked: a snapshot, at most `SNAPSHOT` of them, the longest unrefreshed first. */
  due(): Promise<string[]>;
  /** Claims, for this call, those of `userIds` still due and claimed by nobody else: their ids. */
  claim(userIds: string[]): Promise<string[]>;
  /** The tokens of a claimed grant, read under the claim (`undefined`: none stored). */
  read(userId: string): Promise<TokenSet | undefined>;
}

/** The most grants a snapshot of the due ones holds (`GrantClaims.due`): the next snapshot has the rest. */
export const SNAPSHOT = 10_000;

const SWEEP_OPTIONS = /* @__PURE__ */ optionNames<KeepGrantsAliveOptions>({ olderThanMs: 0, concurrency: 0, signal: 0 });
const GRANTS_OPTIONS = /* @__PURE__ */ optionNames<GrantsOptions>({ status: 0, limit: 0, after: 0 });

/** The checked options of a sweep. */
export function sweepOptions(options: KeepGrantsAliveOptions): { windowMs: number; concurrency: number; signal: AbortSignal | undefined } {
  const { olderThanMs, concurrency, signal } = checkOptions(options, SWEEP_OPTIONS, 'keepGrantsAlive()');
  if (olderThanMs === undefined) invalidOption('olderThanMs', 'is required: the window in ms within which every grant is refreshed once, e.g. 7 * 86_400_000.');
  if (signal !== undefined && !(signal instanceof AbortSignal)) invalidOption('signal', 'must be an AbortSignal (`AbortSignal.timeout(ms)`, or an AbortController\'s `signal`).');
  return {
    windowMs: integerOption(olderThanMs, 'olderThanMs', 0, 1_000, MAX_TIMEOUT_MS * 1_000),
    concurrency: integerOption(concurrency, 'concurrency', 4, 1, 1_000),
    signal,
  };
}

/** The checked options of `grants()`. */
export function grantsOptions(options: GrantsOptions = {}): { status: ListedStatus | undefined; limit: number; after: string } {
  const { status, limit, after = '' } = checkOptions(options, GRANTS_OPTIONS, 'grants()');
  if (status !== undefined && status !== 'connected' && status !== 'needs_reconnect') invalidOption('status', "must be 'connected' or 'needs_reconnect' (or left out: every grant).");
  if (typeof after !== 'string') invalidOption('after', 'must be the `next` of the page before.');
  return { status, limit: integerOption(limit, 'limit', 100, 1, 1_000), after };
}

/**
 * The sweep: takes a snapshot of the due grants, in an order of its own (processes sweeping at once start at different
 * grants), and claims them as refreshes end, at most `concurrency` in flight; then another snapshot, until one yields
 * no claim (what remains is claimed by others). A grant that fails is counted, not claimed again by this call, and
 * the sweep goes on. Stops claiming on `signal`, and resolves with the counts once the refreshes in flight are done. A
 * failed snapshot or claim (the store down) rejects, after those.
 */
export async function sweepGrants(claims: GrantClaims, keepAlive: KeepAlive, options: { concurrency: number; signal: AbortSignal | undefined }): Promise<KeepGrantsAliveResult> {
  const counts: KeepGrantsAliveResult = { refreshed: 0, skipped: 0, dead: 0, failed: 0 };
  const running = new Map<string, Promise<void>>();
  /** Grants that failed in this call: not claimed again by it (the next run tries again). */
  const failed = new Set<string>();
  const { concurrency, signal } = options;
  let queue: string[] = [];
  let claimedSinceSnapshot = true;
  const next = async (limit: number): Promise<string[]> => {
    const claimed: string[] = [];
    while (claimed.length < limit) {
      if (queue.length === 0) {
        if (!claimedSinceSnapshot) break;
        queue = shuffled(await claims.due());
        claimedSinceSnapshot = false;
        if (queue.length === 0) break;
      }
      // Not a grant of this call's in flight or failed: one freed its claim before its refresh saved (still due).
      const batch = queue.splice(0, limit - claimed.length).filter((userId) => !running.has(userId) && !failed.has(userId) && !claimed.includes(userId));
      if (batch.length === 0) continue;
      const got = await claims.claim(batch);
      claimedSinceSnapshot ||= got.length > 0;
      claimed.push(...got);
    }
    return claimed;
  };
  try {
    for (let exhausted = false; !exhausted && signal?.aborted !== true; ) {
      const claimed = await next(concurrency - running.size);
      exhausted = claimed.length === 0;
      for (const userId of claimed) {
        const done: Promise<void> = claims
          .read(userId)
          .then((tokens) => keepAlive(userId, tokens))
          .then(
            (outcome) => void counts[outcome]++,
            () => {
              counts.failed++;
              failed.add(userId);
            },
          )
          .finally(() => running.delete(userId));
        running.set(userId, done);
      }
      while (running.size >= concurrency || (exhausted && running.size > 0)) await Promise.race(running.values());
    }
  } finally {
    await Promise.all(running.values());
  }
  return counts;
}

function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

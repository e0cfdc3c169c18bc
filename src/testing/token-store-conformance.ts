/**
 * `tokenStoreConformance`: the checks a `TokenStore` must pass, for the stores the SDK ships and for yours. Each check
 * is a `{ name, run }` whose `run` throws on failure, so they run under any test runner (vitest, jest, node:test):
 *
 *   for (const check of tokenStoreConformance({ makeStore })) it(check.name, check.run)
 *
 * No test runner is imported here, and no `node:` module: the checks use only the store, timers and the SDK's
 * `TokenManager`.
 */
import { TokenStoreError } from '../oauth/errors.js';
import { TokenManager } from '../oauth/token-manager.js';
import type { TokenSet, TokenStore } from '../oauth/types.js';
import { randomHex } from '../core/bytes.js';
import { integerOption, invalidOption, MAX_TIMEOUT_MS } from '../core/invalid-option.js';
import { sleep, within } from '../core/time-bound.js';

const DEFAULT_TIMEOUT_MS = 20_000;
/** The lease a store's lock is checked to extend when `lockTtlMs` is not given. */
const DEFAULT_LEASE_MS = 1_000;

/** Options of {@link tokenStoreConformance}. */
export interface TokenStoreConformanceOptions {
  /**
   * A store for `key` (each check uses a fresh one, e.g. `conformance_3f9a…`). Every call is another handle on the same
   * stored tokens, as another process would have: a store over a database or Redis makes a new object per call; a
   * store that keeps its tokens in the object itself (one process) returns the same object for the same key.
   */
  makeStore: (key: string) => TokenStore | Promise<TokenStore>;
  /**
   * Writes a value that is not a token set where the store keeps `key`'s tokens (e.g. `UPDATE … SET tokens = 'x'`):
   * with it, the kit checks that reading it fails as a `TokenStoreError` (through a `TokenManager`), never as "no
   * tokens" or as a broken TokenSet.
   */
  corrupt?: (key: string) => void | Promise<void>;
  /**
   * The lock expiry (`lockTtlMs`) of the stores `makeStore` makes, in ms, for a lock shared by processes: with it, the
   * kit also checks that the lock expires when its holder stalls past it. Whether it is given or not, a store with
   * `lock` is checked to keep the lock for a live holder for 3 × `lockTtlMs` (3 000 ms without it). A lock within one
   * process (it dies with its holder) leaves it out. 1 000 is a good value.
   */
  lockTtlMs?: number;
  /**
   * How long one check may take, in ms, before it fails (a `get()`, `set()` or `lock()` that never answers fails the
   * check instead of hanging it). Default 20 000: keep it under your test runner's own time-out.
   */
  timeoutMs?: number;
}

/** One check: `run` resolves when the store passes it, and rejects with an `Error` saying what failed otherwise. */
export interface TokenStoreConformanceCheck {
  /** What the check checks, as a test's name. */
  readonly name: string;
  /** Runs the check: resolves when the store passes, rejects with an `Error` saying what failed. */
  readonly run: () => Promise<void>;
}

/**
 * The checks of the `TokenStore` contract: round trip, every field kept (the `userId` stamp, unknown fields); empty
 * is `undefined`; returned values are copies; different keys (case, lone surrogates) are different tokens or refused;
 * compare-and-set on `expectedRefreshToken` (writes when the stored refresh token matches, when nothing is stored, or
 * for these very tokens; refuses otherwise), racing writers (exactly one wins); and, when the store has `lock`: the
 * lock excludes, returns `fn`'s result, rethrows its error and is freed after it, and is extended for a live holder;
 * with `lockTtlMs`, it expires for a stalled one; with `corrupt`, a corrupt stored value is a `TokenStoreError`; when
 * the store marks dead grants (`getGrant`, `markReauthorizationRequired`, `delete`): the mark is a compare-and-set
 * whose winner alone is told, every write of tokens clears it, `delete` leaves one that refuses a write-back. Each
 * check fails after `timeoutMs` (beyond its own waits) instead of hanging on a store call that never answers.
 *
 * @example
 * import { tokenStoreConformance } from '@postsched/sdk/testing'
 * describe('SqlTokenStore', () => {
 *   for (const check of tokenStoreConformance({ makeStore: (key) => new SqlTokenStore(db, key) })) it(check.name, check.run)
 * })
 */
export function tokenStoreConformance(options: TokenStoreConformanceOptions): TokenStoreConformanceCheck[] {
  if (typeof options?.makeStore !== 'function') invalidOption('makeStore', 'must be a function (key) => TokenStore.');
  const { makeStore, corrupt, lockTtlMs } = options;
  const timeoutMs = integerOption(options.timeoutMs, 'timeoutMs', DEFAULT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
  if (corrupt !== undefined && typeof corrupt !== 'function') invalidOption('corrupt', 'must be a function (key) => void.');
  if (lockTtlMs !== undefined && !(Number.isInteger(lockTtlMs) && lockTtlMs > 0)) invalidOption('lockTtlMs', 'must be a positive integer of milliseconds.');
  const leaseMs = lockTtlMs ?? DEFAULT_LEASE_MS;
  const fresh = async (key = `conformance_${randomHex(12)}`): Promise<{ key: string; store: () => Promise<TokenStore> }> => {
    return { key, store: async () => checkedStore(await makeStore(key)) };
  };
  /**
   * A check whose run fails once `timeoutMs` (beyond the `planned` waits of its own) have passed: a store call that
   * never answers must not hang the kit.
   */
  const check = (name: string, run: () => Promise<void>, planned = 0): TokenStoreConformanceCheck => ({
    name,
    run: () =>
      within(run(), Math.min(timeoutMs + planned, MAX_TIMEOUT_MS), undefined, () =>
        Promise.reject(new Error(`TokenStore conformance: the check did not finish within ${timeoutMs} ms (\`timeoutMs\`): a get(), set() or lock() of the store never answered`)),
      ),
  });

  const checks: TokenStoreConformanceCheck[] = [
    check('get() is undefined while nothing is stored', async () => {
      const { store } = await fresh();
      same(await (await store()).get(), undefined, 'get() before any set()');
    }),
    check('set() then get() gives the same TokenSet, from this handle and from another', async () => {
      const { store } = await fresh();
      const [a, b] = [await store(), await store()];
      const one = tokens();
      await a.set(one);
      same(await a.get(), one, 'get() after set()');
      same(await b.get(), one, 'get() through another handle');
      const two = tokens();
      await b.set(two);
      same(await a.get(), two, 'get() after a second set()');
    }),
    check('returned values are copies: changing what get() returned, or what set() was given, changes nothing stored', async () => {
      const { store } = await fresh();
      const s = await store();
      const given = tokens();
      const kept = structuredClone(given);
      await s.set(given);
      given.accessToken = 'changed after set';
      given.scopes.push('changed');
      same(await s.get(), kept, 'get() after the given TokenSet was changed');
      const got = (await s.get()) as TokenSet;
      got.accessToken = 'changed after get';
      got.scopes.length = 0;
      same(await s.get(), kept, 'get() after the returned TokenSet was changed');
    }),
    check('set() then get() keeps every field: the userId stamp, and fields the store does not know', async () => {
      const { store } = await fresh();
      const given = { ...tokens(), userId: 'user_conformance', addedLater: { kind: 'a field of a later SDK', n: [1, 2] } } as TokenSet;
      await (await store()).set(given);
      same(await (await store()).get(), given, 'get() of tokens with a userId and an unknown field');
    }),
    check('different keys are different tokens: keys that differ only in case, or in a lone surrogate (or these are refused)', async () => {
      const base = `conformance_${randomHex(12)}`;
      const pairs: Array<[string, string, boolean]> = [
        [`${base}_Case`, `${base}_case`, false],
        [`${base}\uD800`, `${base}\uDC00`, true], // UTF-8 turns both into U+FFFD
      ];
      for (const [first, second, mayRefuse] of pairs) {
        const written: Array<[TokenStore, TokenSet]> = [];
        for (const key of [first, second]) {
          const stored = tokens();
          const refusal = { error: undefined as unknown };
          const handle = await (await fresh(key)).store().catch((error: unknown) => void (refusal.error = error ?? 'a rejection'));
          if (handle !== undefined) await handle.set(stored).then(() => written.push([handle, stored]), (error: unknown) => void (refusal.error = error ?? 'a rejection'));
          if (refusal.error !== undefined && !mayRefuse) fail(`makeStore() or set() under ${JSON.stringify(key)} failed: ${describe(refusal.error)}`);
        }
        if (written.length < 2) continue; // refused: the store does not take such a key
        for (const [handle, stored] of written) same(await handle.get(), stored, `get() under ${JSON.stringify(first)} and ${JSON.stringify(second)}, each after its own set()`);
      }
    }),
    check('compare-and-set: writes when the stored refresh token is the expected one, when nothing is stored, or for these very tokens', async () => {
      const { store } = await fresh();
      const s = await store();
      const first = tokens();
      same(await s.set(first, { expectedRefreshToken: 'rt_never_stored' }), true, 'set() with expectedRefreshToken while nothing is stored');
      same(await s.get(), first, 'get() after that write');
      const second = tokens();
      same(await s.set(second, { expectedRefreshToken: first.refreshToken }), true, 'set() expecting the stored refresh token');
      same(await s.get(), second, 'get() after that write');
      same(await s.set(structuredClone(second), { expectedRefreshToken: first.refreshToken }), true, 'set() of the very tokens stored (a repeated write)');
      same(await s.get(), second, 'get() after the repeated write');
    }),
    check('compare-and-set: refuses (returns false, keeps what is stored) when the store holds other tokens', async () => {
      const { store } = await fresh();
      const s = await store();
      const current = tokens();
      await s.set(current);
      const late = tokens();
      same(await s.set(late, { expectedRefreshToken: 'rt_rotated_out' }), false, 'set() expecting a refresh token the store does not hold');
      same(await s.get(), current, 'get() after the refused write');
      same(await (await store()).set(late, { expectedRefreshToken: 'rt_rotated_out' }), false, 'the same refused write through another handle');
      same(await s.get(), current, 'get() after the refused write through another handle');
    }),
    check('compare-and-set: of 8 writers racing from the same tokens, exactly one wins, 5 rounds in a row', async () => {
      const { store } = await fresh();
      const handles = await Promise.all(Array.from({ length: 8 }, () => store()));
      let current = tokens();
      await handles[0]!.set(current);
      for (let round = 0; round < 5; round++) {
        const candidates = handles.map(() => tokens());
        const expected = current.refreshToken;
        const results = await Promise.all(handles.map((h, i) => h.set(candidates[i]!, { expectedRefreshToken: expected })));
        const winners = results.flatMap((r, i) => (r === true ? [i] : []));
        if (winners.length !== 1 || results.some((r) => r !== true && r !== false)) {
          fail(`round ${round + 1}: set() returned ${JSON.stringify(results)}; exactly one true (the others false) was expected`);
        }
        current = candidates[winners[0]!]!;
        same(await handles[7]!.get(), current, `round ${round + 1}: get() after the race (the winner's tokens)`);
      }
    }),
  ];

  checks.push(
    check('the lock excludes: 8 handles × 3 concurrent holders never overlap', async () => {
      const { store } = await fresh();
      const handles = await Promise.all(Array.from({ length: 8 }, () => store()));
      if (handles[0]!.lock === undefined) return; // no lock: within one process the manager needs none
      let inside = 0;
      let most = 0;
      let ran = 0;
      await Promise.all(
        handles.flatMap((h) =>
          [0, 1, 2].map(() =>
            lockOf(h)(async () => {
              inside++;
              most = Math.max(most, inside);
              await sleep(1 + Math.random() * 5);
              inside--;
              ran++;
            }),
          ),
        ),
      );
      if (most !== 1) fail(`${most} holders were inside lock() at once; the lock must let one in at a time`);
      same(ran, 24, 'holders that ran');
    }),
  );

  checks.push(
    check('lock() returns what fn returns, rethrows what fn throws, and is free again after fn threw', async () => {
      const { store } = await fresh();
      const [a, b] = [await store(), await store()];
      if (a.lock === undefined) return;
      const result = tokens();
      same(await lockOf(a)(async () => result), result, 'what lock() returned for the TokenSet fn returned');
      const thrown = new Error('thrown by fn inside lock()');
      const caught = await lockOf(a)(async () => {
        throw thrown;
      }).then(() => undefined, (error: unknown) => error);
      if (caught !== thrown) fail(`lock() of a fn that threw settled with ${describe(caught)}, not the error fn threw`);
      // Not freed, the next holder waits (here: until the check's time-out).
      same(await lockOf(b)(async () => 'entered'), 'entered', 'lock() from another handle after a holder threw');
    }),
    check(`the lock is extended: a live holder keeps it for 3 × lockTtlMs (${3 * leaseMs} ms)`, async () => {
      const { store } = await fresh();
      const [a, b] = [await store(), await store()];
      if (a.lock === undefined) return; // without lockTtlMs too: a short lease never extended gets a grant revoked
      let aInside = false;
      let overlapped = false;
      let started!: () => void;
      const aStarted = new Promise<void>((resolve) => (started = resolve));
      const holder = lockOf(a)(async () => {
        aInside = true;
        started();
        await sleep(leaseMs * 3);
        await a.set(tokens()); // still this holder's lock: the write goes through
        aInside = false;
      });
      await aStarted;
      const waiter = lockOf(b)(async () => {
        overlapped ||= aInside;
      });
      await Promise.all([holder, waiter]);
      if (overlapped) fail('another holder got the lock while its live holder was still inside: the lock was not extended');
    }, 3 * leaseMs),
  );

  if (lockTtlMs !== undefined) {
    checks.push(
      check(`the lock expires: a holder that stalls past lockTtlMs (${lockTtlMs} ms) loses it to the next`, async () => {
        const { store } = await fresh();
        const [a, b] = [await store(), await store()];
        if (a.lock === undefined) fail('the store has no lock() although lockTtlMs was given');
        let bIn = false;
        let bInWhileAHeld = false;
        let entered: Promise<void> | undefined;
        await lockOf(a)(async () => {
          // No timer of this process runs, so the holder cannot extend its lock.
          if (stall(lockTtlMs * 1.5) < lockTtlMs) fail('the kit could not stall this thread past lockTtlMs');
          entered = lockOf(b)(async () => {
            bIn = true;
          });
          await Promise.race([entered, sleep(lockTtlMs * 10)]);
          bInWhileAHeld = bIn;
        });
        await entered;
        if (!bInWhileAHeld) fail('another holder could not take the lock while its first holder had stalled past lockTtlMs');
      }, 12 * lockTtlMs),
    );
  }

  checks.push(
    check("the mark of a dead grant (getGrant, markReauthorizationRequired, delete): a compare-and-set, cleared by every write of tokens; delete leaves a mark that refuses a write-back", async () => {
      const { store } = await fresh();
      const [a, b] = [await store(), await store()];
      if (typeof a.getGrant !== 'function' || typeof a.markReauthorizationRequired !== 'function') return; // no marks: told per process
      const [getGrant, mark] = [(s: TokenStore) => s.getGrant!(), (s: TokenStore, refused: TokenSet) => s.markReauthorizationRequired!('invalid_grant', refused)];
      const [one, two, three, four] = [tokens(), tokens(), tokens(), tokens()];
      await a.set(one);
      same((await getGrant(a)).reconnect, undefined, 'the mark before any');
      // Only while the store holds the refused tokens, and only the first mark: the compare-and-set's winner is told.
      same(await mark(a, tokens()), false, 'markReauthorizationRequired() of tokens the store does not hold');
      same(await mark(a, one), true, 'markReauthorizationRequired() of the stored tokens');
      same(await mark(b, one), false, 'a second markReauthorizationRequired() of the same tokens, through another handle');
      const { reconnect } = await getGrant(b);
      if (reconnect?.reason !== 'invalid_grant' || typeof reconnect.since !== 'number' || Math.abs(reconnect.since - Date.now()) > 3_600_000) {
        fail(`getGrant() after the mark gave reconnect ${describe(reconnect)}; expected { reason: 'invalid_grant', since: now }`);
      }
      // Every write of tokens clears it: a compare-and-set, a write inside the lock, a plain write.
      await b.set(two, { expectedRefreshToken: one.refreshToken });
      same((await getGrant(a)).reconnect, undefined, 'the mark after a compare-and-set of new tokens');
      same(await mark(b, two), true, 'markReauthorizationRequired() of the new tokens');
      await (a.lock === undefined ? a.set(three) : a.lock(() => a.set(three)));
      same((await getGrant(b)).reconnect, undefined, 'the mark after a write inside the lock');
      same(await mark(a, three), true, 'markReauthorizationRequired() after the write inside the lock');
      await b.set(four);
      same((await getGrant(a)).reconnect, undefined, 'the mark after a plain write');
      if (typeof a.delete !== 'function') return;
      // Deleted: nothing stored, a `no_tokens` mark; another process's write-back (a compare-and-set over nothing) is
      // refused; a new sign-in (a plain write) lands and clears it.
      await a.delete();
      const deleted = await getGrant(b);
      if (deleted.tokens !== undefined || deleted.reconnect?.reason !== 'no_tokens') fail(`getGrant() after delete() gave ${describe({ tokens: deleted.tokens === undefined ? undefined : 'tokens', reconnect: deleted.reconnect })}; expected no tokens and reason 'no_tokens'`);
      same(await b.set(four, { expectedRefreshToken: four.refreshToken }), false, 'a write-back (compare-and-set) after delete()');
      same(await b.get(), undefined, 'get() after a refused write-back');
      const five = tokens();
      await b.set(five);
      const signedIn = await getGrant(a);
      same([signedIn.tokens, signedIn.reconnect], [five, undefined], 'getGrant() after a new sign-in (a plain write): its tokens, its mark');
    }),
  );
  if (corrupt !== undefined) {
    checks.push(
      check('a corrupt stored value fails to read: get() rejects, and a TokenManager gets a TokenStoreError', async () => {
        const { key, store } = await fresh();
        const s = await store();
        await s.set(tokens());
        await corrupt(key);
        const read = await s.get().then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
        if (!('error' in read)) fail(`get() of a corrupt value resolved (${describe(read.value)}); it must reject`);
        const manager = new TokenManager({ store: await store(), oauth: { refresh: () => Promise.reject(new Error('no refresh expected')) } });
        const error = await manager.getAccessToken().then(() => undefined, (e: unknown) => e);
        if (!(error instanceof TokenStoreError)) fail(`a TokenManager over the corrupt value failed with ${describe(error)}, not a TokenStoreError`);
      }),
    );
  }
  return checks;
}

/**
 * Blocks this thread for `ms` (no timer, I/O or promise of this process runs meanwhile) and says how long it was
 * blocked. `Atomics.wait`, not an empty busy loop, which the build dropped as code without effect; where waiting is
 * not allowed (a browser's main thread), a loop whose result is used.
 */
function stall(ms: number): number {
  const start = Date.now();
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  } catch {
    let now = start;
    while (now < start + ms) now = Date.now();
  }
  return Date.now() - start;
}

function fail(message: string): never {
  throw new Error(`TokenStore conformance: ${message}`);
}

function checkedStore(store: TokenStore): TokenStore {
  if (typeof store?.get !== 'function' || typeof store.set !== 'function') fail('makeStore() must return a TokenStore (get and set)');
  return store;
}

function lockOf(store: TokenStore): <T>(fn: () => Promise<T>) => Promise<T> {
  return (fn) => store.lock!(fn);
}

/** Deep equality of JSON-safe values (TokenSets, booleans, numbers, undefined). */
function same(actual: unknown, expected: unknown, what: string): void {
  if (JSON.stringify(sorted(actual)) !== JSON.stringify(sorted(expected))) fail(`${what}: got ${describe(actual)}, expected ${describe(expected)}`);
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]));
}

/** The kit's own tokens are made up, so showing them in a failure is safe; anything else is shown by its type. */
function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value instanceof Error) return `${value.name}: ${value.message.slice(0, 200)}`;
  try {
    return JSON.stringify(value).slice(0, 300);
  } catch {
    return typeof value;
  }
}

let counter = 0;

/** A made-up TokenSet, different every time. */
function tokens(): TokenSet {
  const n = `${++counter}_${randomHex(12).slice(0, 8)}`;
  return { accessToken: `at_conformance_${n}`, refreshToken: `rt_conformance_${n}`, expiresAt: Date.now() + 3_600_000, scopes: ['posts:read'], tokenType: 'bearer' };
}


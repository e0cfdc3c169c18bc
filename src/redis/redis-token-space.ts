/**
 * `RedisTokenSpace`: the token keys under one prefix as one object. It makes each user's `RedisTokenStore` (key
 * `${prefix}{userId}`, the shared options given once) and keeps an index of its users beside them, for `grants()` and
 * for the sweep of `UserClients.keepGrantsAlive`.
 *
 * The index: two sorted sets in one slot of their own (`${prefix}~grants{~}:users`, every user, score 0, read in
 * user-id order; `…:refreshed`, score = when the user's tokens were last written, epoch ms). A store of the space
 * writes them after each token write it makes, best effort: on Redis Cluster the user's key and the index are in
 * different slots, so not one script. When that index write fails, the tokens stand and the index keeps the older
 * time: the grant looks due early, the sweep refreshes it (once more than needed) and that write mends the index.
 * A grant never written through a store of the space (tokens stored before) is not in the index: `reindex()` adds it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { constructorOptions, integerOption, invalidOption, invalidValue, MAX_TIMEOUT_MS, optionNames } from '../core/invalid-option.js';
import type { TokenSet, TokenStoreSetOptions } from '../oauth/types.js';
import { type GrantClaims, type GrantInfo, type GrantPage, type GrantsOptions, grantsOptions, type KeepAlive, type KeepGrantsAliveOptions, type KeepGrantsAliveResult, SNAPSHOT, sweepGrants, sweepOptions, type TokenSpace } from '../store/grant-space.js';
import { storeCipher } from '../store/token-cipher.js';
import { lockTimes } from '../store/lease-lock.js';
import { defineScript, RedisConnection } from './redis-connection.js';
import { parseMark, RedisTokenStore, type RedisTokenStoreOptions } from './redis-token-store.js';

/** Options of `new RedisTokenSpace(...)`: those of `RedisTokenStore` but `key`, and the prefix of the keys. */
export interface RedisTokenSpaceOptions extends Omit<RedisTokenStoreOptions, 'key'> {
  /** The keys' prefix: a user's tokens are at `${prefix}{userId}` (the braces: their Cluster hash tag). Default `postsched:tokens:`. */
  prefix?: string;
}

const OPTIONS = /* @__PURE__ */ optionNames<RedisTokenSpaceOptions>({ redis: 0, prefix: 0, encryptionKey: 0, lockTtlMs: 0, lockWaitMs: 0, commandTimeoutMs: 0 });

/** Candidates read from the index per command. */
const PAGE = 1_000;

/** A token write: the user in the index, with its time. KEYS users, refreshed; ARGV user id, epoch ms. */
const INDEX_WRITTEN = /* @__PURE__ */ defineScript(`
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
`);

/**
 * The sweep's claim of one grant: `2` when a mark of a dead grant stands (`${key}:reconnect`, naming the value the
 * key holds, `"of":""` when none: what `RedisTokenStore.getGrant` reads), else `1` when this sweep took the claim
 * (`${key}:sweep`, for ARGV[2] ms: no other sweep takes the grant meanwhile), `0` when another holds it. Without ARGV
 * (`grants()`): the standing mark, or nil. KEYS the mark, the tokens, the claim; ARGV owner, ms.
 */
const CLAIM = /* @__PURE__ */ defineScript(`
local mark = redis.call('GET', KEYS[1])
if mark then
  local value = redis.call('GET', KEYS[2])
  if not string.find(mark, '"of":"' .. (value and redis.sha1hex(value) or '') .. '"', 1, true) then mark = false end
end
if #ARGV == 0 then return mark end
if mark then return 2 end
if redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0
`);

/**
 * The Redis keys of many users' tokens as one object: `store(userId)` is the user's `RedisTokenStore` at
 * `${prefix}{userId}`, `grants()` pages through the users (those that need reconnecting), and `UserClients` takes it
 * as its `store`, which enables `users.keepGrantsAlive()`.
 *
 * @example
 * const space = new RedisTokenSpace({ redis, encryptionKey: process.env.TOKEN_ENCRYPTION_KEY })
 * const users = new UserClients({ oauth, baseUrl, store: space })
 * const { grants, next } = await space.grants({ status: 'needs_reconnect', limit: 100 })
 */
export class RedisTokenSpace implements TokenSpace {
  readonly #options: RedisTokenSpaceOptions;
  readonly #prefix: string;
  readonly #index: { users: string; refreshed: string };
  readonly #connection: RedisConnection;

  constructor(options: RedisTokenSpaceOptions) {
    options = constructorOptions(options, OPTIONS, 'new RedisTokenSpace()', '{ redis, encryptionKey }');
    const { prefix = 'postsched:tokens:' } = options;
    if (typeof prefix !== 'string' || /[{}]/.test(prefix)) invalidOption('prefix', "must be a string without braces (the user's id is put in braces after it), e.g. 'postsched:tokens:'.");
    storeCipher(options.encryptionKey);
    lockTimes(options);
    this.#options = options;
    this.#prefix = prefix;
    const index = `${prefix}~grants{~}`;
    this.#index = { users: `${index}:users`, refreshed: `${index}:refreshed` };
    const timeoutMs = integerOption(options.commandTimeoutMs, 'commandTimeoutMs', 3_000, 1, MAX_TIMEOUT_MS);
    this.#connection = new RedisConnection(options.redis, index, timeoutMs);
  }

  /**
   * The user's store, at `${prefix}{userId}`; its token writes keep the space's index. An id holding a brace is
   * refused (it would break the hash tag, or reach another user's keys): hash such ids first.
   */
  store(userId: string): RedisTokenStore {
    if (typeof userId !== 'string' || userId === '' || /[{}]/.test(userId)) invalidValue('userId', userId, ': give a non-empty id without braces (hash ids that may hold any text).');
    const { prefix: _, ...options } = this.#options;
    return new IndexedStore({ ...options, key: this.#keyOf(userId) }, () => this.#written(userId));
  }

  /**
   * A page of the space's grants (users in the index), in user-id order: `status: 'needs_reconnect'` for a
   * "reconnect your account" page or e-mail. Keyset paging: pass `next` as `after`; each grant is listed once across
   * the pages. Reads the index and each listed user's mark (one GET per user), until `limit` grants are found.
   *
   * @example
   * const { grants, next } = await space.grants({ status: 'needs_reconnect', after: cursor })
   */
  async grants(options?: GrantsOptions): Promise<GrantPage> {
    const { status, limit, after } = grantsOptions(options);
    const grants: GrantInfo[] = [];
    for (let from = after; ; ) {
      const users = (await this.#connection.command('get', ['ZRANGE', this.#index.users, from === '' ? '-' : `(${from}`, '+', 'BYLEX', 'LIMIT', '0', String(limit)])) as string[];
      const [marks, times] = await Promise.all([
        Promise.all(users.map((userId) => this.#connection.script('get', CLAIM, [`${this.#keyOf(userId)}:reconnect`, this.#keyOf(userId), `${this.#keyOf(userId)}:sweep`], []))),
        users.length === 0 ? [] : (this.#connection.command('get', ['ZMSCORE', this.#index.refreshed, ...users]) as Promise<unknown[]>),
      ]);
      for (const [i, userId] of users.entries()) {
        const grant = grantOf(userId, marks[i], times[i]);
        if (status !== undefined && grant.status !== status) continue;
        grants.push(grant);
        if (grants.length === limit) return { grants, next: userId };
      }
      if (users.length < limit) return { grants };
      from = users[users.length - 1]!;
    }
  }

  /**
   * Adds to the index every user whose tokens are under the prefix (SCAN of one server's keys: on Redis Cluster,
   * call it with a client of each master): tokens stored before the space, or by `RedisTokenStore`s made without it.
   * Their time is unknown, so they count as not refreshed. Resolves to how many users it added.
   *
   * @example
   * await space.reindex() // once, after moving from `store: (userId) => new RedisTokenStore(…)` to a space
   */
  async reindex(): Promise<number> {
    let added = 0;
    let cursor = '0';
    do {
      const [next, keys] = (await this.#connection.command('get', ['SCAN', cursor, 'MATCH', `${this.#prefix}{*}`, 'COUNT', '500', 'TYPE', 'string'])) as [string, string[]];
      for (const key of keys) {
        const userId = key.slice(this.#prefix.length + 1, -1);
        if (key !== this.#keyOf(userId)) continue; // `…}:lock` and the like
        added += Number(await this.#connection.command('set', ['ZADD', this.#index.users, '0', userId]));
        await this.#connection.command('set', ['ZADD', this.#index.refreshed, 'NX', '0', userId]);
      }
      cursor = String(next);
    } while (cursor !== '0');
    return added;
  }

  /**
   * @internal The sweep: reads the due grants from the index (`refreshed` up to now, each due once its slot passed),
   * claims them as refreshes end, each with a script on the user's keys (skipping marked ones), reads its tokens under the claim and hands
   * them to `keepAlive`. The claim lasts half the window and is not released: a grant whose index write failed is not
   * claimed again meanwhile.
   */
  async sweep(keepAlive: KeepAlive, options: KeepGrantsAliveOptions): Promise<KeepGrantsAliveResult> {
    const { windowMs, concurrency, signal } = sweepOptions(options);
    const owner = `sweep:${randomUUID()}`;
    const claims: GrantClaims = {
      due: () => this.#due(windowMs),
      claim: async (userIds) => {
        const answers = await Promise.all(userIds.map((userId) => this.#claim(userId, owner, windowMs)));
        return userIds.filter((_, i) => answers[i]);
      },
      read: (userId) => this.store(userId).get(),
    };
    return sweepGrants(claims, keepAlive, { concurrency, signal });
  }

  /** What `JSON.stringify` shows: the prefix; never a token or a key. */
  toJSON(): {
    /** The keys' prefix. */
    prefix: string;
  } {
    return { prefix: this.#prefix };
  }

  #keyOf(userId: string): string {
    return `${this.#prefix}{${userId}}`;
  }

  /**
   * Claims a grant for the sweep (`owner`): `false` when another holds it, or when it is marked (it then leaves the
   * sweep's candidates: 0 requests for it; the next token write, a connect, puts it back).
   */
  async #claim(userId: string, owner: string, windowMs: number): Promise<boolean> {
    const key = this.#keyOf(userId);
    const answer = await this.#connection.script('lock', CLAIM, [`${key}:reconnect`, key, `${key}:sweep`], [owner, String(Math.ceil(windowMs / 2))]);
    if (answer === 2) await this.#connection.command('set', ['ZREM', this.#index.refreshed, userId]);
    return answer === 1;
  }

  /** The due grants in the index now (pages of `refreshed` up to now, filtered by slot), oldest first, at most `SNAPSHOT`. */
  async #due(windowMs: number): Promise<string[]> {
    const now = Date.now();
    const due: string[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = (await this.#connection.command('get', ['ZRANGE', this.#index.refreshed, '-inf', `(${now}`, 'BYSCORE', 'LIMIT', String(offset), String(PAGE), 'WITHSCORES'])) as string[];
      for (let i = 0; i < page.length; i += 2) if (Number(page[i + 1]) < lastSlot(page[i]!, windowMs, now)) due.push(page[i]!);
      if (page.length < 2 * PAGE || due.length >= SNAPSHOT) return due;
    }
  }

  /** After a token write of a store of the space; best effort (see the file's comment). */
  async #written(userId: string): Promise<void> {
    await this.#connection.script('set', INDEX_WRITTEN, [this.#index.users, this.#index.refreshed], [userId, String(Date.now())]).catch(() => undefined);
  }
}

/** A `RedisTokenStore` of a space: after each token write it makes, the space's index is written. */
class IndexedStore extends RedisTokenStore {
  readonly #written: () => Promise<void>;

  constructor(options: RedisTokenStoreOptions, written: () => Promise<void>) {
    super(options);
    this.#written = written;
  }

  override async set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<boolean> {
    const written = await super.set(tokens, options);
    if (written) await this.#written();
    return written;
  }
}

/**
 * The latest passing of the user's slot in the window, epoch ms: the first 32 bits of the MD5 of the id modulo the
 * window (as the Postgres claim computes it), so the grants' refreshes are spread evenly over the window.
 */
export function lastSlot(userId: string, windowMs: number, now: number): number {
  const offset = Number.parseInt(createHash('md5').update(userId).digest('hex').slice(0, 8), 16) % windowMs;
  return now - ((now - offset) % windowMs);
}

/**
 * A listed grant, from its standing mark (`${key}:reconnect`, read by CLAIM only while it names the stored value) and
 * its index time. The mark is parsed as the store parses it (`parseMark`), so a grant reads the same listed or alone.
 */
function grantOf(userId: string, stored: unknown, time: unknown): GrantInfo {
  const refreshed = time === null || time === undefined ? undefined : Number(time);
  const grant: GrantInfo = { userId, status: 'connected', ...(refreshed === undefined || refreshed === 0 ? {} : { refreshedAt: refreshed }) };
  const mark = parseMark(stored);
  return mark === undefined ? grant : { ...grant, status: 'needs_reconnect', reason: mark.reason, since: mark.since };
}

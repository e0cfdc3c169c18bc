/**
 * `RedisRateLimiter`: the `RateLimiter` of the main entry (held for this process's steps), its blocks and quota windows kept in Redis (or a Redis
 * Cluster) for every process. A key's state is one hash `<prefix>:{<key>}`, with Redis's own clock in its scripts and
 * a relative expiry (the hosts' clocks do not matter): LEARN applies an answer, TAKE takes a turn, each the same steps
 * as the in-process limiter. A new or longer block, or a key newly paced, is PUBLISHed on `<prefix>`: each process
 * holds one subscription (a duplicate of the client) and copies it into its own state.
 * Cost: a call costs no Redis command unless its user is limited (a block, or most of a stated quota spent); then
 * one TAKE before each attempt and one LEARN after it. Redis down or slow: each command is cut off by
 * `commandTimeoutMs`, LEARNs are dropped, TAKEs fall back to this process's own state for a pause: each process goes
 * on with its own blocks and quotas, never a failed call because of the limiter.
 * The retry budget (`RETRY_BUDGET`) is one integer in Redis for every process: one RETRY per retry, which also
 * hands over the answers this process counted since its last (no command per successful call while it has retries).
 */
import { checkOptions, integerOption, invalidOption, MAX_TIMEOUT_MS, optionNames } from '../core/invalid-option.js';
import { MAX_BLOCK_MS, RateLimiter, RETRY_BUDGET, type RateLimiterLike, type RateLimiterOptions, type RateLimitFacts, type RateLimitState, type Turn } from '../http/rate-limiter.js';
import { defineScript, RedisConnection, type RedisClientLike } from './redis-connection.js';

/** Options of `new RedisRateLimiter(...)`. */
export interface RedisRateLimiterOptions extends RateLimiterOptions {
  /**
   * A connected ioredis client or `Cluster`, or node-redis client or cluster (v4 to v6). The limiter makes one
   * subscriber connection of its own from it (`duplicate()`); `close()` ends that one only: quit this client
   * yourself when you are done with it.
   */
  redis: RedisClientLike;
  /** Start of the keys (`<prefix>:{<key>}`) and the pub/sub channel (`<prefix>`). Default `postsched:ratelimit`. */
  prefix?: string;
  /** Time bound of the one command that shares a block, in ms; past it the block stays this process's own. Default 1 000. */
  commandTimeoutMs?: number;
}

const OPTIONS = /* @__PURE__ */ optionNames<RedisRateLimiterOptions>({ redis: 0, prefix: 0, commandTimeoutMs: 0, key: 0, onRateLimit: 0 });

/** How long paced keys take their turns in this process after Redis failed a TAKE, before Redis is asked again. */
const REDIS_PAUSE_MS = 5_000;

/**
 * Both scripts read Redis's own clock (TIME), the same for every process. A key's state is one hash, the fields of
 * rate-limiter.ts's KeyLimit: b blockedUntil, w window, l left, e end, f sent, g guessed, L limit, W windowMs. TAKE is
 * `KeyLimit.take`: KEYS[1] the state; returns {wait ms, window, limit, left, ms to the window's end}, a request of
 * `window` taken when the wait is 0; limit 0: Redis has no quota of the key.
 */
const TAKE = /* @__PURE__ */ defineScript(`
local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'b', 'w', 'l', 'e', 'L', 'W', 'f')
local b, w, l, e, L, W, f = tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or 0, tonumber(s[5]) or 0, tonumber(s[6]) or 0, tonumber(s[7]) or 0
if now < b then return {b - now, w, L, l, e - now} end
if L == 0 then return {0, 0, 0, 0, 0} end
if now >= e then
  w = w + 1 l = L - f f = 0 e = now + W
  redis.call('HSET', KEYS[1], 'w', w, 'e', e, 'g', 1)
end
if l <= 0 then redis.call('HSET', KEYS[1], 'l', l, 'f', f) return {e - now, w, L, l, e - now} end
redis.call('HSET', KEYS[1], 'l', l - 1, 'f', f + 1)
redis.call('PEXPIRE', KEYS[1], math.max(b, e + W) - now)
return {0, w, L, l - 1, e - now}
`);

/**
 * LEARN is `KeyLimit.learn`: KEYS[1] the state; ARGV[1] block ms (0: none), ARGV[2] remaining (-1: not
 * said), ARGV[3] reset ms (-1), ARGV[4] limit (0), ARGV[5] the request's window (0: none), ARGV[6] channel, ARGV[7]
 * key, ARGV[8] the other requests of its client on their way. The first quota known leaves out, for each other
 * process subscribed (on a Redis Cluster: through the key's node), as many requests on their way as this one had
 * (the answered one too): they are in no count yet. A new or longer block, or a key newly paced, is PUBLISHed: every process then holds or paces it too.
 */
const LEARN = /* @__PURE__ */ defineScript(`
local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'b', 'w', 'l', 'e', 'g', 'L', 'W', 'f')
local b, w, l, e, g, L, W, f = tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or 0, s[5] == '1', tonumber(s[6]) or 0, tonumber(s[7]) or 0, tonumber(s[8]) or 0
local block, R, T, limit, win = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local told = false
if win > 0 and win == w and f > 0 and now < e then f = f - 1 end
if limit > 0 then told = L == 0 L = limit end
if T > W then W = T end
if block > 0 and now + block > b then b = now + block told = true end
if R >= 0 and T >= 0 then
  local current = win == w or (win == 0 and not g)
  if L == 0 then
    if R == 0 and now + T > b then b = now + T told = true end
  elseif w == 0 then
    local others = redis.call('PUBSUB', 'NUMSUB', ARGV[6])[2] - 1
    w = 1 l = R - math.max(0, others) * (tonumber(ARGV[8]) + 1) f = 0 e = now + T g = false
  elseif current then
    if g or now + T < e then e = now + T end
    g = false
    if R < l then l = R end
  end
end
redis.call('HSET', KEYS[1], 'b', b, 'w', w, 'l', l, 'e', e, 'f', f, 'g', g and 1 or 0, 'L', L, 'W', W)
redis.call('PEXPIRE', KEYS[1], math.max(1, math.max(b, e + W) - now))
if told then redis.call('PUBLISH', ARGV[6], cjson.encode({ARGV[7], math.max(0, b - now), L, W})) end
return math.max(0, b - now)
`);

/**
 * RETRY: the retry budget of every process (`RETRY_BUDGET`, in tenths), one integer `<prefix>:retry-budget`, full
 * when absent. ARGV[1] the answers this process counted since its last RETRY (batched refills), ARGV[2] the budget,
 * ARGV[3] the cost: 10 takes one retry when there is one and returns 1 when taken; 0 only hands the refills over and
 * returns 1 when the budget is full. Expires 10 minutes after the last RETRY.
 */
const RETRY = /* @__PURE__ */ defineScript(`
local full, cost = tonumber(ARGV[2]), tonumber(ARGV[3]) local v = redis.call('GET', KEYS[1])
local t = math.min(full, (v and tonumber(v) or full) + tonumber(ARGV[1]))
local ok = 0 if t >= full or cost > 0 and t >= cost then t = t - cost ok = 1 end
redis.call('SET', KEYS[1], t, 'PX', 600000)
return ok
`);

/** The part of a subscriber connection used: ioredis (`subscribe` + `message` events) or node-redis (`subscribe(channel, listener)`). */
interface Subscriber {
  subscribe: (channel: string, listener?: (message: string) => void) => unknown;
  on?: (event: string, listener: (...args: never[]) => void) => unknown;
  connect?: () => Promise<unknown>;
  disconnect?: () => unknown;
  destroy?: () => unknown;
}

/**
 * A `RateLimiter` shared through Redis: after a 429 for a user, no process sends that user's requests until the wait
 * passed; once most of a user's stated quota is spent, every process takes its turns from the one count in Redis.
 *
 * @example
 * import { RedisRateLimiter } from '@postsched/sdk/redis'
 * const rateLimiter = new RedisRateLimiter({ redis })
 * const users = new UserClients({ oauth, baseUrl, store, rateLimiter })
 * // on shutdown
 * await rateLimiter.close()
 */
export class RedisRateLimiter implements RateLimiterLike {
  /** This process's state, turns and budget: Redis's steps go around its. */
  readonly #local: RateLimiter;
  readonly #connection: RedisConnection<'share'>;
  readonly #prefix: string;
  readonly #subscriber: Subscriber | undefined;
  /** Until when paced keys take their turns, and retries draw from the budget, in this process: Redis failed. */
  #pausedUntil = 0;
  /** Answers counted here since the last RETRY: given to the shared budget with the next one (at most a full budget). */
  #refills = 0;
  /** Redis refused this process a retry and has not said its budget is full since: refills go to it as they come. */
  #refused = false;

  constructor(options: RedisRateLimiterOptions) {
    const checked = checkOptions(options, OPTIONS, 'new RedisRateLimiter()');
    this.#local = new RateLimiter(checked);
    const { prefix = 'postsched:ratelimit' } = checked;
    if (typeof prefix !== 'string' || prefix === '') invalidOption('prefix', 'must be a non-empty string.');
    this.#prefix = prefix;
    const timeoutMs = integerOption(checked.commandTimeoutMs, 'commandTimeoutMs', 1_000, 1, MAX_TIMEOUT_MS);
    // Its errors never reach a caller: a block that cannot be shared stays this process's own.
    this.#connection = new RedisConnection<'share'>(checked.redis, prefix, timeoutMs, () => new Error('Redis rate limiter unavailable'));
    this.#subscriber = this.#subscribe(checked.redis as unknown as { duplicate?: () => Subscriber });
    // Both scripts hashed and known to Redis before the first call: a TAKE must not overtake the LEARN sent before it
    // (a first hash still being computed, or a NOSCRIPT answer and its retry, would let it).
    for (const script of [TAKE, LEARN, RETRY]) void script.sha1.then(() => this.#connection.command('share', ['SCRIPT', 'LOAD', script.source])).catch(() => undefined);
  }

  /**
   * Ends the limiter's own subscriber connection, and only that: the `redis` client you passed stays open (and keeps
   * a script from exiting) until you `quit()` it.
   */
  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    await (subscriber?.destroy ?? subscriber?.disconnect)?.call(subscriber);
  }

  /** What `key`'s limit is now, as this process knows it. */
  state(key: string): RateLimitState {
    return this.#local.state(key);
  }

  /** @internal */
  keyOf(userId: string): string {
    return this.#local.keyOf(userId);
  }

  /** @internal */
  waitMs(key: string): number {
    return this.#local.waitMs(key);
  }

  /** @internal */
  queue(key: string, change: 1 | -1): void {
    this.#local.queue(key, change);
  }

  /**
   * A paced key's turn is taken in Redis (one command), unless this process already knows its calls must wait; any
   * other key's here, with no command. Redis down or slow (a TAKE failed, within `commandTimeoutMs`): this process's
   * own turns for `REDIS_PAUSE_MS`, then Redis is asked again (fail open: never a failed call, nor a wait per call).
   * @internal
   */
  take(key: string): Turn | Promise<Turn> {
    const local = this.#local;
    if (!local.paced(key) || local.waitMs(key) > 0 || Date.now() < this.#pausedUntil) return local.take(key);
    return this.#connection.script('share', TAKE, [this.#stateKey(key)], []).then(
      (reply) => {
        const [waitMs, window, limit, left, endMs] = Array.isArray(reply) ? reply.map(Number) : [];
        if (![waitMs, window, limit, left, endMs].every(Number.isFinite)) return local.take(key);
        // Known here from now on: while the window is spent, the calls that follow wait without asking Redis.
        this.#local.learn(key, { redis: true, quota: { window: window!, left: left!, endMs: endMs!, limit: limit! } }, 0);
        return waitMs! > 0 ? { waitMs: waitMs!, window: 0, spreadMs: 0 } : { waitMs: 0, window: window!, spreadMs: 0 };
      },
      () => {
        this.#pausedUntil = Date.now() + REDIS_PAUSE_MS;
        return local.take(key);
      },
    );
  }

  /**
   * A retry draws from the budget in Redis, shared by every process (one command per retry, carrying this process's
   * refills since the last); Redis down or slow: from this process's own budget for `REDIS_PAUSE_MS` (fail open).
   * @internal
   */
  retry(): boolean | Promise<boolean> {
    if (Date.now() < this.#pausedUntil) return this.#local.retry();
    return this.#shared(10).then(
      (taken) => {
        if (!taken) this.#refused = true;
        return taken;
      },
      () => {
        this.#pausedUntil = Date.now() + REDIS_PAUSE_MS;
        return this.#local.retry();
      },
    );
  }

  /**
   * An answer: counted here, given to Redis with the next retry (no command per call). After an outage emptied the
   * budget (Redis refused a retry), every 10 are handed over at once until it is full: the successes of a busy process
   * then bring back the retries of one with few calls. @internal
   */
  refill(): void {
    this.#local.refill();
    if (this.#refills < RETRY_BUDGET) this.#refills++;
    if (this.#refused && this.#refills >= 10 && Date.now() >= this.#pausedUntil) {
      this.#shared(0).then((full) => {
        if (full) this.#refused = false;
      }, () => undefined);
    }
  }

  /** RETRY with this process's refills since the last, at `cost` (10: a retry; 0: the refills only). */
  #shared(cost: 10 | 0): Promise<boolean> {
    const refills = this.#refills;
    this.#refills = 0;
    return this.#connection.script('share', RETRY, [`${this.#prefix}:retry-budget`], [String(refills), String(RETRY_BUDGET), String(cost)]).then((reply) => Number(reply) === 1);
  }

  /** What an answer said, here and, when it was kept here, in Redis for every process. @internal */
  learn(key: string, facts: RateLimitFacts, window: number): boolean | undefined {
    const blocked = this.#local.learn(key, facts, window);
    if (blocked === undefined || facts.redis === true) return blocked;
    const { blockMs = 0, remaining = -1, resetMs = -1, limit = 0, sending = 0 } = facts;
    // Whole numbers for Lua: the waits at most a day, the counts at most 15 digits (core/rate-limit.ts).
    const args = [Math.min(blockMs, MAX_BLOCK_MS), remaining, Math.min(resetMs, MAX_BLOCK_MS), limit].map((n) => String(Math.ceil(n)));
    this.#connection.script('share', LEARN, [this.#stateKey(key)], [...args, String(window), this.#prefix, key, String(sending)]).then(
      // Another process's block is longer: hold to it.
      (storedMs) => typeof storedMs === 'number' && storedMs > blockMs && this.#local.learn(key, { blockMs: storedMs, redis: true }, 0),
      () => undefined,
    );
    return blocked;
  }

  /** Blocks `key` for `ms` from now unless it already is for longer, here and in Redis. @internal */
  block(key: string, ms: number): boolean {
    return this.learn(key, { blockMs: ms }, 0) === true;
  }

  #stateKey(key: string): string {
    return `${this.#prefix}:{${key}}`;
  }

  /** One subscription per limiter: other processes' blocks, copied into this one's. A client without `duplicate` shares one way only. */
  #subscribe(redis: { duplicate?: () => Subscriber }): Subscriber | undefined {
    if (typeof redis.duplicate !== 'function') return undefined;
    const subscriber = redis.duplicate();
    const channel = this.#prefix;
    const receive = (message: string) => {
      try {
        const [key, blockMs, limit, windowMs] = JSON.parse(message) as unknown[];
        if (typeof key !== 'string' || ![blockMs, limit, windowMs].every((n) => typeof n === 'number' && n >= 0)) return;
        this.#local.learn(key, { blockMs: (blockMs as number) || undefined, limit: (limit as number) || undefined, resetMs: (windowMs as number) || undefined, redis: true }, 0);
      } catch {
        // not one of ours
      }
    };
    subscriber.on?.('error', () => undefined); // reconnect noise while Redis is down: the client reconnects on its own
    const ignore = () => undefined;
    if (typeof subscriber.connect === 'function' && !('call' in subscriber)) {
      // node-redis: connect the duplicate, then subscribe with a listener.
      subscriber.connect().then(() => subscriber.subscribe(channel, receive)).then(ignore, ignore);
    } else {
      // ioredis: it connects by itself; messages come as events.
      subscriber.on?.('message', ((from: string, message: string) => from === channel && receive(message)) as never);
      Promise.resolve(subscriber.subscribe(channel)).then(ignore, ignore);
    }
    return subscriber;
  }
}

/**
 * `RedisRateLimiter`: the `RateLimiter` of the main entry, its blocks shared by every process on one Redis (or Redis
 * Cluster). A block is a key `<prefix>:{<key>}` with a relative expiry (`PX`: the hosts' clocks do not matter), only
 * ever extended (one script: set when the new wait is longer than its PTTL), and PUBLISHed on `<prefix>`: each
 * process holds one subscription (a duplicate of the client) and copies the blocks into its own in-process state.
 * So a call costs no Redis command at all unless its answer blocks its user (a 429, `RateLimit-Remaining: 0`).
 * Redis down or slow: the script is cut off by `commandTimeoutMs` and dropped, the subscription misses what it
 * misses; each process goes on with its own blocks. Never a wait on Redis inside a call.
 */
import { checkOptions, integerOption, invalidOption, MAX_TIMEOUT_MS, optionNames } from '../core/invalid-option.js';
import { RateLimiter, type RateLimiterOptions } from '../http/rate-limiter.js';
import { defineScript, RedisConnection, type RedisClientLike } from './redis-connection.js';

/** Options of `new RedisRateLimiter(...)`. */
export interface RedisRateLimiterOptions extends RateLimiterOptions {
  /**
   * A connected ioredis client or `Cluster`, or node-redis client or cluster (v4 to v6). The limiter makes one
   * subscriber connection of its own from it (`duplicate()`); `close()` ends it.
   */
  redis: RedisClientLike;
  /** Start of the keys (`<prefix>:{<key>}`) and the pub/sub channel (`<prefix>`). Default `postsched:ratelimit`. */
  prefix?: string;
  /** Time bound of the one command that shares a block, in ms; past it the block stays this process's own. Default 1 000. */
  commandTimeoutMs?: number;
}

const OPTIONS = /* @__PURE__ */ optionNames<RedisRateLimiterOptions>({ redis: 0, prefix: 0, commandTimeoutMs: 0, key: 0, onRateLimit: 0 });

/**
 * KEYS[1] the block; ARGV[1] wait ms, ARGV[2] channel, ARGV[3] message. Extends the block when the new wait is longer
 * than what is left of it and publishes the message; returns the wait now stored, in ms.
 */
const EXTEND = defineScript(`
local left = redis.call('PTTL', KEYS[1])
local ms = tonumber(ARGV[1])
if left >= ms then return left end
redis.call('SET', KEYS[1], '1', 'PX', ms)
redis.call('PUBLISH', ARGV[2], ARGV[3])
return ms
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
 * A `RateLimiter` shared through Redis: after a 429 (or `RateLimit-Remaining: 0`) for a user, no process sends
 * that user's requests until the wait passed.
 *
 * @example
 * import { RedisRateLimiter } from '@postsched/sdk/redis'
 * const rateLimiter = new RedisRateLimiter({ redis })
 * const users = new UserClients({ oauth, baseUrl, store, rateLimiter })
 * // on shutdown
 * await rateLimiter.close()
 */
export class RedisRateLimiter extends RateLimiter {
  readonly #connection: RedisConnection<'share'>;
  readonly #prefix: string;
  readonly #subscriber: Subscriber | undefined;

  constructor(options: RedisRateLimiterOptions) {
    const checked = checkOptions(options, OPTIONS, 'new RedisRateLimiter()');
    super(checked);
    const { prefix = 'postsched:ratelimit' } = checked;
    if (typeof prefix !== 'string' || prefix === '') invalidOption('prefix', 'must be a non-empty string.');
    this.#prefix = prefix;
    const timeoutMs = integerOption(checked.commandTimeoutMs, 'commandTimeoutMs', 1_000, 1, MAX_TIMEOUT_MS);
    // Its errors never reach a caller: a block that cannot be shared stays this process's own.
    this.#connection = new RedisConnection<'share'>(checked.redis, prefix, timeoutMs, () => new Error('Redis rate limiter unavailable'));
    this.#subscriber = this.#subscribe(checked.redis as unknown as { duplicate?: () => Subscriber });
  }

  /** Ends the subscriber connection (the client you passed stays yours). */
  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    await (subscriber?.destroy ?? subscriber?.disconnect)?.call(subscriber);
  }

  protected override share(key: string, ms: number): void {
    const message = JSON.stringify([key, ms]);
    this.#connection.script('share', EXTEND, [`${this.#prefix}:{${key}}`], [String(Math.ceil(ms)), this.#prefix, message]).then(
      // Another process's block is longer: hold to it.
      (stored) => typeof stored === 'number' && stored > ms && this.extend(key, stored),
      () => undefined,
    );
  }

  /** One subscription per limiter: other processes' blocks, copied into this one's. A client without `duplicate` shares one way only. */
  #subscribe(redis: { duplicate?: () => Subscriber }): Subscriber | undefined {
    if (typeof redis.duplicate !== 'function') return undefined;
    const subscriber = redis.duplicate();
    const channel = this.#prefix;
    const receive = (message: string) => {
      try {
        const [key, ms] = JSON.parse(message) as [unknown, unknown];
        if (typeof key === 'string' && typeof ms === 'number' && ms > 0) this.extend(key, ms);
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

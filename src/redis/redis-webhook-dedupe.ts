/**
 * `RedisWebhookDedupe`: the dedupe store of `createWebhookHandler` for a fleet of receivers sharing one Redis (or a
 * Redis Cluster). Each transition is one atomic step on the server: claim and complete are Lua scripts, release a
 * compare-and-delete script, so two receivers can never both take an event, and a receiver whose claim expired
 * can never give back the claim another one took since.
 */
import { ValidationError } from '../errors.js';
import type { WebhookClaim, WebhookClaimContext, WebhookDedupeStore } from '../webhooks/dedupe.js';
import { RELEASE_LOCK } from './lock-scripts.js';
import { defineScript, RedisConnection, type RedisClientLike } from './redis-connection.js';
import { positiveInteger } from './redis-token-store.js';
import { type RedisWebhookDedupeOperation, WebhookDedupeUnavailableError } from './webhook-dedupe-error.js';

/** Options of `new RedisWebhookDedupe(...)`. */
export interface RedisWebhookDedupeOptions {
  /**
   * A connected ioredis client (`new Redis(url)`), ioredis `Cluster` (`new Cluster(nodes)`) or node-redis client
   * (`await createClient({ url }).connect()`), v4 to v6. Neither package is imported by the SDK.
   */
  redis: RedisClientLike;
  /** Start of every key this store writes. Default `postsched:webhook`. */
  prefix?: string;
  /**
   * How long a handled event is remembered, in ms: a duplicate delivered later runs its handler again. Keep it
   * longer than the service retries (not shown by the spec). Default 7 days. Also how long a post's newest
   * handled `created_at` is kept after it last moved.
   */
  doneTtlMs?: number;
  /** Time bound of each Redis command, in ms; past it a `WebhookDedupeUnavailableError`. Default 3 000. */
  commandTimeoutMs?: number;
}

const DEFAULT_PREFIX = 'postsched:webhook';
const DEFAULT_DONE_TTL_MS = 7 * 86_400_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 3_000;

/**
 * Claim: take an unknown event for `ttlMs` (its value is the claim id), or say it is in flight or done; for a new
 * one, compare its `created_at` with the post's newest handled one. KEYS[1] event, KEYS[2] post's newest;
 * ARGV[1] claim id, ARGV[2] ttl ms, ARGV[3] created_at instant or ''. Returns new, stale, in-flight or done.
 */
const CLAIM = defineScript(`
local held = redis.call('GET', KEYS[1])
if held == 'done' then return 'done' end
if held then return 'in-flight' end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local newest = tonumber(redis.call('GET', KEYS[2]) or '')
if newest and ARGV[3] ~= '' and newest > tonumber(ARGV[3]) then return 'stale' end
return 'new'
`);

/**
 * Complete: mark the event done (whoever held it: the handler did finish) and move the post's newest handled
 * `created_at` up, never down. KEYS as CLAIM; ARGV[1] done ttl ms, ARGV[2] created_at instant or ''.
 */
const COMPLETE = defineScript(`
redis.call('SET', KEYS[1], 'done', 'PX', ARGV[1])
if ARGV[2] ~= '' then
  local newest = tonumber(redis.call('GET', KEYS[2]) or '')
  if not newest or newest < tonumber(ARGV[2]) then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[1]) end
end
return 1
`);

/**
 * The `dedupe` store of `createWebhookHandler` for several processes or instances: each event's handler succeeds
 * once across the fleet. Keys: `<prefix>:{post:<id>}:<webhookDedupeKey>` per event (its claim id while in flight,
 * `done` once handled) and `<prefix>:{post:<id>}:newest` per post; the hash tag keeps a post's keys in one Cluster
 * slot, so each script touches one slot.
 *
 * @example
 * import { Redis } from 'ioredis'
 * import { createWebhookHandler } from '@postsched/sdk/webhooks'
 * import { RedisWebhookDedupe } from '@postsched/sdk/redis'
 *
 * const webhooks = createWebhookHandler({
 *   secret: process.env.POSTSCHED_WEBHOOK_SECRET!,
 *   dedupe: new RedisWebhookDedupe({ redis: new Redis(process.env.REDIS_URL!) }),
 *   on: { 'post.published': (event) => queue.add('published', { id: event.data.id }) },
 * })
 */
export class RedisWebhookDedupe implements WebhookDedupeStore {
  readonly #connection: RedisConnection<RedisWebhookDedupeOperation>;
  readonly #prefix: string;
  readonly #doneTtlMs: string;

  constructor(options: RedisWebhookDedupeOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new ValidationError('new RedisWebhookDedupe() needs an options object: { redis }.', []);
    }
    const { prefix = DEFAULT_PREFIX } = options;
    if (typeof prefix !== 'string' || prefix.length === 0) throw new ValidationError('`prefix` must be a non-empty string.', ['prefix']);
    this.#prefix = prefix;
    this.#doneTtlMs = String(positiveInteger(options.doneTtlMs, DEFAULT_DONE_TTL_MS, 'doneTtlMs', 1));
    const timeoutMs = positiveInteger(options.commandTimeoutMs, DEFAULT_COMMAND_TIMEOUT_MS, 'commandTimeoutMs', 1);
    this.#connection = new RedisConnection(options.redis, prefix, timeoutMs, (operation, detail) => new WebhookDedupeUnavailableError(operation, detail));
  }

  /** Takes the event for `context.ttlMs`, or says it is in flight or done; `stale` when its post moved past it. */
  async claim(key: string, context: WebhookClaimContext): Promise<WebhookClaim> {
    const state = await this.#connection.script('claim', CLAIM, this.#keys(key, context), [
      context.claimId,
      String(context.ttlMs),
      instant(context),
    ]);
    return state === 'stale' ? { state: 'new', stale: true } : { state: state as WebhookClaim['state'] };
  }

  /** Marks the event done for `doneTtlMs` and moves its post's newest handled `created_at` up. */
  async complete(key: string, context: WebhookClaimContext): Promise<void> {
    await this.#connection.script('complete', COMPLETE, this.#keys(key, context), [this.#doneTtlMs, instant(context)]);
  }

  /** Gives the claim back if it still holds `context.claimId` (not one taken since, nor a done mark). */
  async release(key: string, context: WebhookClaimContext): Promise<void> {
    await this.#connection.script('release', RELEASE_LOCK, this.#keys(key, context).slice(0, 1), [context.claimId]);
  }

  /** The event's key and its post's newest-`created_at` key, in the post's hash tag (never empty: `post:`). */
  #keys(key: string, { postId }: WebhookClaimContext): [string, string] {
    if (typeof postId !== 'string') throw new ValidationError('RedisWebhookDedupe needs the claim context of createWebhookHandler.', ['context']);
    const post = `${this.#prefix}:{post:${postId}}:`;
    return [post + key, `${post}newest`];
  }
}

function instant({ createdAt }: WebhookClaimContext): string {
  return createdAt === undefined ? '' : String(createdAt);
}

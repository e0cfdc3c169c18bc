/**
 * `RedisWebhookDedupe`: the dedupe store of `createWebhookHandler` for a fleet of receivers sharing one Redis (or a
 * Redis Cluster). Each transition is one atomic step on the server: claim and complete are Lua scripts, release a
 * compare-and-delete script, so two receivers can never both take an event, and a receiver whose claim expired
 * can never give back the claim another one took since.
 */
import { constructorOptions, integerOption, invalidOption, invalidValue, MAX_TIMEOUT_MS, optionNames, refusal } from '../core/invalid-option.js';
import { checkWellFormedId } from '../core/well-formed-id.js';
import type { WebhookClaim, WebhookClaimContext, WebhookDedupeStore } from '../webhooks/dedupe.js';
import { RELEASE_LOCK } from './lock-scripts.js';
import { defineScript, RedisConnection, type RedisClientLike, type RedisScript } from './redis-connection.js';
import { type WebhookDedupeOperation, WebhookDedupeUnavailableError } from '../store/webhook-dedupe-error.js';

/** Options of `new RedisWebhookDedupe(...)`. */
export interface RedisWebhookDedupeOptions {
  /**
   * A connected ioredis client (`new Redis(url)`), ioredis `Cluster` (`new Cluster(nodes)`) or node-redis client
   * (`await createClient({ url }).connect()`), v4 to v6. Neither package is imported by the SDK.
   */
  redis: RedisClientLike;
  /**
   * Start of every key this store writes. Default `postsched:webhook`. Without an empty hash tag `{}` (refused: on a
   * Cluster it would put a post's keys in different slots).
   */
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

const OPTIONS = /* @__PURE__ */ optionNames<RedisWebhookDedupeOptions>({ redis: 0, prefix: 0, doneTtlMs: 0, commandTimeoutMs: 0 });

const DEFAULT_PREFIX = 'postsched:webhook';
const DEFAULT_DONE_TTL_MS = 7 * 86_400_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 3_000;

/**
 * Claim, for each event of a batch: take an unknown event for its ttl (the value is its claim id), renew the ttl
 * of a claim that holds the same claim id, or say it is in flight or done; for a new one, compare its `created_at`
 * with its post's newest handled one. Per event n (from 0):
 * KEYS[2n+1] event, KEYS[2n+2] post's newest; ARGV[3n+1] claim id, ARGV[3n+2] ttl ms, ARGV[3n+3] created_at or ''.
 * Returns one of new, stale, in-flight, done per event. One script, so each event's step is atomic.
 */
const CLAIM = defineScript(`
local out = {}
for n = 0, #KEYS / 2 - 1 do
  local event, newestKey, a = KEYS[2 * n + 1], KEYS[2 * n + 2], 3 * n
  local held = redis.call('GET', event)
  if held == 'done' then out[n + 1] = 'done'
  elseif held and held ~= ARGV[a + 1] then out[n + 1] = 'in-flight'
  else
    redis.call('SET', event, ARGV[a + 1], 'PX', ARGV[a + 2])
    local newest = tonumber(redis.call('GET', newestKey) or '')
    local at = tonumber(ARGV[a + 3])
    if newest and at and newest > at then out[n + 1] = 'stale' else out[n + 1] = 'new' end
  end
end
return out
`);

/**
 * Complete, for each event of a batch: mark it done (whoever held it: the handler did finish) and move its post's
 * newest handled `created_at` up, never down. KEYS as CLAIM; ARGV[1] done ttl ms, ARGV[n+2] created_at or ''.
 */
const COMPLETE = defineScript(`
for n = 0, #KEYS / 2 - 1 do
  redis.call('SET', KEYS[2 * n + 1], 'done', 'PX', ARGV[1])
  local at = tonumber(ARGV[n + 2])
  if at then
    local newest = tonumber(redis.call('GET', KEYS[2 * n + 2]) or '')
    if not newest or newest < at then redis.call('SET', KEYS[2 * n + 2], ARGV[n + 2], 'PX', ARGV[1]) end
  end
end
return #KEYS / 2
`);

/** Calls of one kind that wait while a batch of that kind is in flight, then go together as one script. */
interface Batch {
  busy: boolean;
  keys: string[];
  args: string[];
  waiting: { resolve: (reply: unknown) => void; reject: (error: unknown) => void }[];
}

/** At most this many events in one script: a bounded time inside Redis, which runs one script at a time. */
const MAX_BATCH = 64;

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
  readonly #connection: RedisConnection<WebhookDedupeOperation>;
  readonly #prefix: string;
  readonly #doneTtlMs: string;
  /** A Cluster spreads posts over slots, and one script may touch one slot only: no batches there. */
  readonly #batched: boolean;
  readonly #batches: Record<'claim' | 'complete', Batch> = {
    claim: { busy: false, keys: [], args: [], waiting: [] },
    complete: { busy: false, keys: [], args: [], waiting: [] },
  };

  constructor(options: RedisWebhookDedupeOptions) {
    options = constructorOptions(options, OPTIONS, 'new RedisWebhookDedupe()', '{ redis }');
    const { prefix = DEFAULT_PREFIX } = options;
    if (typeof prefix !== 'string' || prefix.length === 0) invalidOption('prefix', 'must be a non-empty string.');
    // A Cluster hashes the text between a key's first `{` and the next `}`, the whole key when that is empty: a
    // post's two keys would then fall in two slots, and every script fail (CROSSSLOT).
    const tag = prefix.indexOf('{');
    if (tag !== -1 && prefix[tag + 1] === '}') {
      invalidValue(
        'prefix',
        prefix,
        ": its empty hash tag `{}` puts a post's keys in different Redis Cluster slots, so every delivery would fail. " +
          'Remove the `{}` (each post then has a slot of its own), or name it (`{webhooks}`: every key in one slot).',
      );
    }
    this.#prefix = prefix;
    this.#doneTtlMs = String(integerOption(options.doneTtlMs, 'doneTtlMs', DEFAULT_DONE_TTL_MS, 1, Number.MAX_SAFE_INTEGER));
    const timeoutMs = integerOption(options.commandTimeoutMs, 'commandTimeoutMs', DEFAULT_COMMAND_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
    this.#connection = new RedisConnection(options.redis, prefix, timeoutMs, (operation, detail) => new WebhookDedupeUnavailableError(operation, detail));
    this.#batched = !this.#connection.isCluster;
  }

  /**
   * Takes the event for `context.ttlMs` (again, when its claim holds `context.claimId`), or says it is in flight or
   * done; `stale` when its post moved past it.
   */
  async claim(key: string, context: WebhookClaimContext): Promise<WebhookClaim> {
    const state = await this.#send('claim', this.#keys(key, context), [context.claimId, String(context.ttlMs), instant(context)]);
    return state === 'stale' ? { state: 'new', stale: true } : { state: state as WebhookClaim['state'] };
  }

  /** Marks the event done for `doneTtlMs` and moves its post's newest handled `created_at` up. */
  async complete(key: string, context: WebhookClaimContext): Promise<void> {
    await this.#send('complete', this.#keys(key, context), [instant(context)]);
  }

  /** Gives the claim back if it still holds `context.claimId` (not one taken since, nor a done mark). */
  async release(key: string, context: WebhookClaimContext): Promise<void> {
    await this.#connection.script('release', RELEASE_LOCK, this.#keys(key, context).slice(0, 1), [context.claimId]);
  }

  /**
   * Runs `operation` for one event. Calls made while a script of the same kind is in flight wait for it and then go
   * together in one script (at most `MAX_BATCH` events): one round trip and one script for many deliveries under
   * load, none added when idle.
   */
  #send(operation: 'claim' | 'complete', keys: [string, string], args: string[]): Promise<unknown> {
    const script = operation === 'claim' ? CLAIM : COMPLETE;
    const head = operation === 'complete' ? [this.#doneTtlMs] : [];
    if (!this.#batched) return this.#connection.script(operation, script, keys, [...head, ...args]).then((replies) => (replies as unknown[])[0]);
    const batch = this.#batches[operation];
    return new Promise((resolve, reject) => {
      batch.keys.push(...keys);
      batch.args.push(...args);
      batch.waiting.push({ resolve, reject });
      if (!batch.busy) this.#flush(operation, script, head);
    });
  }

  #flush(operation: 'claim' | 'complete', script: RedisScript, head: string[]): void {
    const batch = this.#batches[operation];
    const count = Math.min(batch.waiting.length, MAX_BATCH);
    if (count === 0) return;
    const waiting = batch.waiting.splice(0, count);
    const keys = batch.keys.splice(0, 2 * count);
    const args = batch.args.splice(0, (operation === 'claim' ? 3 : 1) * count);
    batch.busy = true;
    void this.#connection.script(operation, script, keys, [...head, ...args]).then(
      (replies) => waiting.forEach((call, i) => call.resolve((replies as unknown[])[i])),
      (error: unknown) => waiting.forEach((call) => call.reject(error)),
    ).finally(() => {
      batch.busy = false;
      this.#flush(operation, script, head);
    });
  }

  /** The event's key and its post's newest-`created_at` key, in the post's hash tag (never empty: `post:`). */
  #keys(key: string, { postId }: WebhookClaimContext): [string, string] {
    if (typeof postId !== 'string') throw refusal('RedisWebhookDedupe needs the claim context of createWebhookHandler.', ['context']);
    checkWellFormedId(key, 'key');
    checkWellFormedId(postId, 'postId', ['context', 'postId']);
    const post = `${this.#prefix}:{post:${postId}}:`;
    return [post + key, `${post}newest`];
  }
}

function instant({ createdAt }: WebhookClaimContext): string {
  return createdAt === undefined ? '' : String(createdAt);
}

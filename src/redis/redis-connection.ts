/**
 * One small adapter over the two Redis clients people use, typed structurally so that neither package is
 * imported (both are optional peer dependencies): every command goes through the client's raw-command call,
 * which both have in every supported version:
 * - ioredis 5: `client.call(name, ...args)` (a `Cluster` too: it routes by the command's keys)
 * - node-redis 4, 5 and 6: `client.sendCommand([name, ...args])`; a cluster (`createCluster`):
 *   `cluster.sendCommand(firstKey, isReadonly, [name, ...args])`, routed by the key we name
 * Raw commands sidestep the option-object differences between the clients' typed helpers
 * (`set(k, v, 'PX', ttl, 'NX')` vs `set(k, v, { NX: true, PX: ttl })` vs `{ condition: 'NX', expiration }`)
 * and `eval(script, numKeys, ...)` vs `eval(script, { keys, arguments })`.
 * Every command is bounded by `commandTimeoutMs` and every failure becomes a `SharedTokenStoreError` (`timeout`,
 * `unavailable`, `cross_slot`, `cluster_client_required`).
 */
import { toHex } from '../core/bytes.js';
import { refusal } from '../core/invalid-option.js';
import { sanitizeCause, scrubStoreMessage } from '../core/scrub.js';
import { timeBound } from '../core/time-bound.js';
import type { TokenStoreOperation } from '../oauth/errors.js';
import { SharedTokenStoreError } from '../store/errors.js';

/**
 * An ioredis client (`new Redis(...)`): only its raw-command method is used.
 *
 * @example
 * import { Redis } from 'ioredis'
 * const redis: IORedisClientLike = new Redis(process.env.REDIS_URL!)
 */
export interface IORedisClientLike {
  /** ioredis's raw command call: `client.call('GET', key)`. */
  call: (command: string, ...args: string[]) => Promise<unknown>;
}

/**
 * A node-redis client (`createClient(...)` or `createClientPool(...)`, already connected): only its raw-command
 * method is used. For a node-redis cluster (`createCluster`), see `NodeRedisClusterLike`.
 *
 * @example
 * import { createClient } from 'redis'
 * const redis: NodeRedisClientLike = await createClient({ url: process.env.REDIS_URL }).connect()
 */
export interface NodeRedisClientLike {
  /** node-redis's raw command call: `client.sendCommand(['GET', key])`. */
  sendCommand: (args: string[]) => Promise<unknown>;
}

/**
 * A node-redis cluster client (`createCluster(...)`, already connected): its raw-command call takes the key that
 * routes the command (every command of the store names the tokens' key or its lock key; with a hash tag in `key`
 * both live on one node). Commands always go to the master (`isReadonly` false): a replica may lag behind a rotation.
 *
 * @example
 * import { createCluster } from 'redis'
 * const redis: NodeRedisClusterLike = await createCluster({ rootNodes: [{ url: process.env.REDIS_URL }] }).connect()
 */
export interface NodeRedisClusterLike {
  /** node-redis's cluster raw command call: `cluster.sendCommand(key, false, ['GET', key])`. */
  sendCommand: (firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]) => Promise<unknown>;
  /** What tells a cluster from a single-node client (node-redis's own property). */
  masters: unknown;
}

/** Any of the Redis clients; see `IORedisClientLike`, `NodeRedisClientLike` and `NodeRedisClusterLike`. */
export type RedisClientLike = IORedisClientLike | NodeRedisClientLike | NodeRedisClusterLike;

/** A Lua script run with EVALSHA, falling back to EVAL when the server has not cached it yet. */
export interface RedisScript {
  readonly source: string;
  /** Lower-case hex SHA-1 of `source`, computed once with Web Crypto. */
  readonly sha1: Promise<string>;
}

/** Defines a script; its SHA-1 is computed lazily by the first run. */
export function defineScript(source: string): RedisScript {
  let sha1: Promise<string> | undefined;
  return {
    source,
    get sha1() {
      sha1 ??= crypto.subtle
        .digest('SHA-1', new TextEncoder().encode(source))
        .then((digest) => toHex(new Uint8Array(digest)));
      return sha1;
    },
  };
}

type Send = (args: string[]) => Promise<unknown>;

/** Builds the error of a command that failed (`cause`, already scrubbed) or got no answer in time (`timeoutMs`). */
export type RedisUnavailable<Operation extends string> = (operation: Operation, detail: { timeoutMs?: number; cause?: Error }) => Error;

/**
 * Raw commands with a time bound; errors are `SharedTokenStoreError`s naming `key` and the operation, or what
 * `unavailable` builds (another store's error class).
 */
export class RedisConnection<Operation extends string = TokenStoreOperation> {
  /** Whether the client is a Redis Cluster client (ioredis `Cluster`, node-redis `createCluster`). */
  readonly isCluster: boolean;
  readonly #send: Send;
  readonly #key: string;
  readonly #timeoutMs: number;
  readonly #unavailable: RedisUnavailable<Operation>;

  constructor(client: unknown, key: string, timeoutMs: number, unavailable?: RedisUnavailable<Operation>) {
    ({ send: this.#send, isCluster: this.isCluster } = toSend(client));
    this.#key = key;
    this.#timeoutMs = timeoutMs;
    this.#unavailable =
      unavailable ?? ((operation, detail) => redisUnavailable(key, operation as TokenStoreOperation, detail));
  }

  /** Runs one command, e.g. `['GET', key]`. */
  command(operation: Operation, args: string[]): Promise<unknown> {
    return this.#bounded(operation, () => this.#send(args));
  }

  /**
   * Runs a script by its SHA-1; on NOSCRIPT (a restarted or flushed server) sends its source once. An integer reply
   * is a number, also from a client set to give numbers as strings (ioredis `stringNumbers`).
   */
  script(operation: Operation, script: RedisScript, keys: string[], args: string[]): Promise<unknown> {
    return this.#bounded(operation, async () => {
      const tail = [String(keys.length), ...keys, ...args];
      let reply: unknown;
      try {
        reply = await this.#send(['EVALSHA', await script.sha1, ...tail]);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        reply = await this.#send(['EVAL', script.source, ...tail]);
      }
      return typeof reply === 'string' && /^-?\d+$/.test(reply) ? Number(reply) : reply;
    });
  }

  /**
   * Races the command against `timeoutMs`. The clients queue commands while reconnecting (ioredis retries
   * each up to 20 times by default), so without this bound a down Redis would stall every token request.
   */
  #bounded(operation: Operation, run: () => Promise<unknown>): Promise<unknown> {
    // The client may settle long after the time-out; the promise is settled once, later results are dropped.
    const command = Promise.resolve()
      .then(run)
      .catch((error: unknown) => {
        // A key without a hash tag on a cluster, or a single-node client on a cluster node: mistakes to fix, not
        // outages to wait out.
        const message = error instanceof Error ? error.message : '';
        if (message.startsWith('CROSSSLOT')) throw crossSlot(this.#key, operation as TokenStoreOperation);
        if (message.startsWith('MOVED')) throw clusterClientRequired(this.#key, operation as TokenStoreOperation);
        throw this.#unavailable(operation, { cause: safeCause(error) });
      });
    return timeBound(() => command, this.#timeoutMs, () => this.#unavailable(operation, { timeoutMs: this.#timeoutMs }));
  }
}

/**
 * Redis did not answer in time (`commandTimeoutMs`: `timeout`), refused the connection, or answered with an error
 * (`unavailable`). Nothing was decided: retry later. `cause`, when present, is a plain `Error` holding only the client
 * library's error name, code and message (never the library's error itself: ioredis attaches the command's
 * arguments, which hold the tokens).
 */
export function redisUnavailable(key: string, operation: TokenStoreOperation, detail: { timeoutMs?: number; cause?: Error; message?: string; code?: 'lock_timeout' }): SharedTokenStoreError {
  const what =
    detail.message ??
    (detail.timeoutMs !== undefined
      ? `Redis did not answer within ${detail.timeoutMs} ms`
      : `Redis failed${detail.cause === undefined ? '' : ` (${detail.cause.message})`}`);
  return new SharedTokenStoreError(
    { store: 'redis', key, operation },
    detail.code ?? (detail.timeoutMs === undefined ? 'unavailable' : 'timeout'),
    `Token store "${key}" is unavailable during ${operation}: ${what}. ` +
      'Check that Redis is reachable; raise `commandTimeoutMs` if it is known to be slow.',
    { timeoutMs: detail.timeoutMs, ...(detail.cause === undefined ? {} : { cause: detail.cause }) },
  );
}

/**
 * Redis Cluster refused a command on the tokens' key and its lock key (`${key}:lock`) together because they hash to
 * different slots (`CROSSSLOT`). Not an outage, and retrying will not help: the message suggests the key with a hash tag.
 */
function crossSlot(key: string, operation: TokenStoreOperation): SharedTokenStoreError {
  return new SharedTokenStoreError(
    { store: 'redis', key, operation },
    'cross_slot',
    `Redis Cluster refused a command on "${key}" and its lock key "${key}:lock": they hash to different slots ` +
      `(CROSSSLOT). Put a hash tag in \`key\` so both share a slot: "${withHashTag(key)}".`,
  );
}

/** Redis answered `MOVED`: a single-node client connected to a node of a Redis Cluster. Retrying will not help. */
function clusterClientRequired(key: string, operation: TokenStoreOperation): SharedTokenStoreError {
  return new SharedTokenStoreError(
    { store: 'redis', key, operation },
    'cluster_client_required',
    `Redis answered MOVED for "${key}": the \`redis\` client is a single-node client connected to a Redis Cluster. ` +
      'Pass a Cluster client instead: ioredis `new Cluster(nodes)` or node-redis `createCluster({ rootNodes })`.',
  );
}

/**
 * `key` with a hash tag, as the cluster messages suggest it: its last `:`-separated part in braces
 * (`postsched:tokens:user_42` → `postsched:tokens:{user_42}`), or the whole key when that part is empty.
 */
export function withHashTag(key: string): string {
  const cut = key.lastIndexOf(':', key.length - 2) + 1;
  return `${key.slice(0, cut)}{${key.slice(cut)}}`;
}

/** Picks the raw-command call of the client, by shape (never by importing either package). */
function toSend(client: unknown): { send: Send; isCluster: boolean } {
  if (typeof client !== 'object' || client === null) {
    throw refusal(`\`redis\` must be an ioredis or node-redis client; got ${client === null ? 'null' : typeof client}.`, ['redis']);
  }
  const candidate = client as Record<string, unknown>;
  if (typeof candidate['call'] === 'function') {
    const ioredis = client as IORedisClientLike;
    return { send: (args) => promised(ioredis.call(args[0] as string, ...args.slice(1))), isCluster: candidate['isCluster'] === true };
  }
  if (typeof candidate['sendCommand'] === 'function') {
    if ('masters' in candidate) {
      const cluster = client as NodeRedisClusterLike;
      return { send: (args) => promised(cluster.sendCommand(firstKey(args), false, args)), isCluster: true };
    }
    const nodeRedis = client as NodeRedisClientLike;
    return { send: (args) => promised(nodeRedis.sendCommand(args)), isCluster: false };
  }
  throw refusal(
    '`redis` must be an ioredis client (new Redis()) or a node-redis client (createClient()): it has neither ' +
      '`call` nor `sendCommand`.',
    ['redis'],
  );
}

/**
 * The client's answer, which must be a promise: a node-redis client in legacy mode (node-redis 4's `legacyMode: true`,
 * 5's `.legacy()`) takes a callback and returns nothing, which would read as "no tokens stored".
 */
function promised(reply: Promise<unknown>): Promise<unknown> {
  if (typeof (reply as Partial<Promise<unknown>> | undefined)?.then === 'function') return reply;
  throw new Error('the client returned no promise: a node-redis client in legacy mode? Pass the promise client (node-redis 4 in legacyMode: client.v4)');
}

/** The key a command names first: `EVALSHA sha numkeys key …` → key; `GET key`, `MGET key …`, `SET key …` → key. */
function firstKey(args: string[]): string | undefined {
  return args[0] === 'EVAL' || args[0] === 'EVALSHA' ? args[3] : args[1];
}

/**
 * A copy of the client's error (name, scrubbed message and stack, code: the secrets module's copy). Never the error
 * itself: ioredis puts the command and its arguments (our token JSON) on `error.command`, and node-redis errors can
 * hold the socket. Scrubbed as a token store's message: the server itself may quote the arguments back (an unknown
 * command: "with args beginning with: …", cut after 128 characters, inside a token too).
 */
function safeCause(error: unknown): Error {
  return sanitizeCause(error, 0, [], scrubStoreMessage) ?? new Error(`Redis client failed with a non-Error value (${typeof error})`);
}

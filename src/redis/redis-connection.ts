/**
 * One small adapter over the two Redis clients people use, typed structurally so that neither package is
 * imported (both are optional peer dependencies): every command goes through the client's raw-command call,
 * which both have in every supported version:
 * - ioredis 5: `client.call(name, ...args)`
 * - node-redis 4, 5 and 6: `client.sendCommand([name, ...args])`
 * Raw commands sidestep the option-object differences between the clients' typed helpers
 * (`set(k, v, 'PX', ttl, 'NX')` vs `set(k, v, { NX: true, PX: ttl })` vs `{ condition: 'NX', expiration }`)
 * and `eval(script, numKeys, ...)` vs `eval(script, { keys, arguments })`.
 * Every command is bounded by `commandTimeoutMs` and every failure becomes a `TokenStoreUnavailableError`.
 */
import { ValidationError } from '../errors.js';
import { sanitizeCause } from '../scrub.js';
import { type RedisTokenStoreOperation, TokenStoreUnavailableError } from './errors.js';

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
 * method is used. A node-redis cluster client is not supported (its `sendCommand` takes a routing key first).
 *
 * @example
 * import { createClient } from 'redis'
 * const redis: NodeRedisClientLike = await createClient({ url: process.env.REDIS_URL }).connect()
 */
export interface NodeRedisClientLike {
  /** node-redis's raw command call: `client.sendCommand(['GET', key])`. */
  sendCommand: (args: string[]) => Promise<unknown>;
}

/** Either Redis client; see `IORedisClientLike` and `NodeRedisClientLike`. */
export type RedisClientLike = IORedisClientLike | NodeRedisClientLike;

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
        .then((digest) => [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join(''));
      return sha1;
    },
  };
}

type Send = (args: string[]) => Promise<unknown>;

/** Raw commands with a time bound; errors are `TokenStoreUnavailableError` naming `key` and the operation. */
export class RedisConnection {
  readonly #send: Send;
  readonly #key: string;
  readonly #timeoutMs: number;

  constructor(client: unknown, key: string, timeoutMs: number) {
    this.#send = toSend(client);
    this.#key = key;
    this.#timeoutMs = timeoutMs;
  }

  /** Runs one command, e.g. `['GET', key]`. */
  command(operation: RedisTokenStoreOperation, args: string[]): Promise<unknown> {
    return this.#bounded(operation, () => this.#send(args));
  }

  /** Runs a script by its SHA-1; on NOSCRIPT (a restarted or flushed server) sends its source once. */
  script(operation: RedisTokenStoreOperation, script: RedisScript, keys: string[], args: string[]): Promise<unknown> {
    return this.#bounded(operation, async () => {
      const tail = [String(keys.length), ...keys, ...args];
      try {
        return await this.#send(['EVALSHA', await script.sha1, ...tail]);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return await this.#send(['EVAL', script.source, ...tail]);
      }
    });
  }

  /**
   * Races the command against `timeoutMs`. The clients queue commands while reconnecting (ioredis retries
   * each up to 20 times by default), so without this bound a down Redis would stall every token request.
   */
  #bounded(operation: RedisTokenStoreOperation, run: () => Promise<unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new TokenStoreUnavailableError(this.#key, operation, { timeoutMs: this.#timeoutMs })),
        this.#timeoutMs,
      );
      // The client may settle long after the time-out; the promise is settled once, later results are dropped.
      Promise.resolve()
        .then(run)
        .then(
          (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(new TokenStoreUnavailableError(this.#key, operation, { cause: safeCause(error) }));
          },
        );
    });
  }
}

/** Picks the raw-command call of the client, by shape (never by importing either package). */
function toSend(client: unknown): Send {
  if (typeof client !== 'object' || client === null) {
    throw new ValidationError(`\`redis\` must be an ioredis or node-redis client; got ${client === null ? 'null' : typeof client}.`, ['redis']);
  }
  const candidate = client as Record<string, unknown>;
  if (typeof candidate['call'] === 'function') {
    const ioredis = client as IORedisClientLike;
    return (args) => ioredis.call(args[0] as string, ...args.slice(1));
  }
  if (typeof candidate['sendCommand'] === 'function') {
    if ('masters' in candidate && 'slots' in candidate) {
      throw new ValidationError(
        '`redis` is a node-redis cluster client, which RedisTokenStore does not support; pass a client of one ' +
          'node (createClient) or an ioredis Cluster, and put a hash tag in `key` (e.g. "tokens:{user_42}").',
        ['redis'],
      );
    }
    const nodeRedis = client as NodeRedisClientLike;
    return (args) => nodeRedis.sendCommand(args);
  }
  throw new ValidationError(
    '`redis` must be an ioredis client (new Redis()) or a node-redis client (createClient()): it has neither ' +
      '`call` nor `sendCommand`.',
    ['redis'],
  );
}

/**
 * A copy of the client's error (name, scrubbed message and stack, code: the secrets module's copy). Never the error
 * itself: ioredis puts the command and its arguments (our token JSON) on `error.command`, and node-redis errors can
 * hold the socket.
 */
function safeCause(error: unknown): Error {
  return sanitizeCause(error) ?? new Error(`Redis client failed with a non-Error value (${typeof error})`);
}

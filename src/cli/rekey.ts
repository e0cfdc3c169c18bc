/**
 * `postsched rekey`: the last step of an encryption key rotation, for tokens kept in Redis by RedisTokenStore or in
 * PostgreSQL by PostgresTokenStore.
 * Re-encrypts every value under an older key of the keyring with its `current` key (`rotateTokenEncryption`), or
 * counts them (`--dry-run`). The keyring comes from the environment only: a command line is visible to every user of
 * the machine (`ps`). Prints counts, never a token, a key or the server's URL (it may hold a password).
 */
import type { PgPoolLike } from '../postgres/pg-connection.js';
import { rotateTokenEncryption as rotatePostgres } from '../postgres/rotate-token-encryption.js';
import type { RedisClientLike } from '../redis/redis-connection.js';
import { rotateTokenEncryption } from '../redis/rotate-token-encryption.js';
import type { EncryptionKey, EncryptionKeyring } from '../store/token-cipher.js';
import { unreadableProblem } from '../store/token-rotation.js';
import { aborted, CliError, type Command, EXIT, networkError, parse, required, UsageError } from './command.js';

export const KEYRING_VAR = 'POSTSCHED_TOKEN_KEYRING';

const HELP = `Usage: postsched rekey --match <pattern> [options]
       postsched rekey --postgres-url <url> [--table <name>] [--dry-run]

Re-encrypts the tokens RedisTokenStore keeps under the keys matching <pattern> (SCAN MATCH), or those
PostgresTokenStore keeps in a table, with the keyring's current key, so that the older keys can be removed. Safe while the app runs: each value is
written back only if no refresh changed it meanwhile. Values that are not tokens (locks) are skipped.

The keyring comes from $${KEYRING_VAR}, as JSON (never from the command line):
  {"current":"k2","keys":{"k1":"<base64 of 32 bytes>","k2":"<base64 of 32 bytes>"}}
Moving from encryptionKey 'none' to a key, add "allowPlaintext":true: the tokens in clear are encrypted too.
Dry-run with the keyring that still holds the older keys: a value none of its keys opens fails the run.

Options:
  --match <pattern>    The stores' keys, e.g. 'postsched:tokens:*'
  --redis-url <url>    One Redis server (default: $REDIS_URL); on a cluster, run once per master
  --postgres-url <url> PostgreSQL instead of Redis (a connection string; needs pg installed)
  --table <name>       With --postgres-url: the stores' table (default postsched_tokens)
  --dry-run            Count only: nothing is written
  -h, --help           This help

Redis needs ioredis installed beside @postsched/sdk (whichever client the app uses); PostgreSQL, pg.
Exit code 0 when no value is left under an older key or in clear (after the run, or already with --dry-run) and
every value opens with the keyring; 1 otherwise.

Example:
  ${KEYRING_VAR}="$(cat keyring.json)" npx postsched rekey --match 'postsched:tokens:*' --dry-run`;

export const rekeyCommand: Command = {
  name: 'rekey',
  summary: 're-encrypt stored tokens with the current key of a keyring (key rotation)',
  help: HELP,
  async run(args, context) {
    const { values } = parse(args, {
      match: { type: 'string' }, 'redis-url': { type: 'string' }, 'postgres-url': { type: 'string' }, table: { type: 'string' }, 'dry-run': { type: 'boolean' },
    });
    if (values.help === true) {
      context.out(HELP);
      return EXIT.ok;
    }
    const postgresUrl = values['postgres-url'];
    if (postgresUrl !== undefined && (values.match !== undefined || values['redis-url'] !== undefined)) throw new UsageError('pass --postgres-url, or --redis-url and --match: not both');
    if (postgresUrl === undefined && values.table !== undefined) throw new UsageError('--table goes with --postgres-url');
    if (postgresUrl === undefined && values.match === undefined) throw new UsageError("pass --match <pattern>: the stores' keys, e.g. 'postsched:tokens:*' (or --postgres-url)");
    const url = postgresUrl ?? required('redis-url', values['redis-url'], 'REDIS_URL', context.env);
    const keyring = parseKeyring(required('keyring', undefined, KEYRING_VAR, context.env));
    const dryRun = values['dry-run'] === true;

    const target = postgresUrl === undefined ? await connect(url) : await connectPostgres(url);
    try {
      const rotation =
        postgresUrl === undefined
          ? rotateTokenEncryption({ redis: target.client as RedisClientLike, match: values.match!, encryptionKey: keyring, dryRun })
          : rotatePostgres({ pool: target.client as PgPoolLike, ...(values.table === undefined ? {} : { table: values.table }), encryptionKey: keyring, dryRun });
      const counts = await Promise.race([rotation, aborted(context.signal).then(() => undefined)]);
      if (counts === undefined) return EXIT.interrupted; // each value was written whole, or not at all
      const { scanned, rewritten, underOldKeys, plaintext } = counts;
      const current = JSON.stringify((keyring as { current: string }).current);
      const where = postgresUrl === undefined ? `matching ${JSON.stringify(values.match)}` : `in table ${JSON.stringify(values.table ?? 'postsched_tokens')}`;
      const clear = plaintext > 0 ? ` (${plaintext} in clear)` : '';
      context.out(`${scanned} token values ${where}${clear}; ${dryRun ? `would rewrite ${underOldKeys}` : `${rewritten} rewritten`} with key ${current}.`);
      // A dry run with unreadable values has failed already (rotateTokenEncryption's ValidationError says why).
      const problem = unreadableProblem(counts, (keyring as Partial<EncryptionKeyring>).allowPlaintext === true);
      if (problem !== undefined) context.err(`The keyring ${problem}`);
      if (underOldKeys > 0) context.err(`${underOldKeys} values are still under older keys${dryRun ? '' : ' (changed by writers during the run): run it again'}.`);
      if (problem !== undefined || underOldKeys > 0) return EXIT.failed;
      context.out(`No value is under an older key${plaintext > 0 ? ' or in clear' : ''}: the older keys${plaintext > 0 ? ' and allowPlaintext' : ''} can be removed from the keyring.`);
      return EXIT.ok;
    } finally {
      target.close();
    }
  },
};

/** The keyring's JSON; a `UsageError` that never shows the text (it holds keys). The cipher checks the keys. */
export function parseKeyring(text: string): EncryptionKey {
  try {
    return JSON.parse(text) as EncryptionKey;
  } catch {
    throw new UsageError(`${KEYRING_VAR} is not JSON: set it to {"current":"k2","keys":{"k1":"<base64>","k2":"<base64>"}}`);
  }
}

/** A node-postgres pool of one connection (each statement takes and gives it back; connection errors are typed). */
export async function connectPostgres(url: string): Promise<{ client: PgPoolLike; close(): void }> {
  let Pool: typeof import('pg').Pool;
  try {
    ({ Pool } = (await import('pg')).default);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ERR_MODULE_NOT_FOUND') throw new CliError('needs pg to reach PostgreSQL: npm install pg');
    throw error;
  }
  const pool = new Pool({ connectionString: url, max: 1 });
  pool.on('error', () => {}); // an idle connection the server ended: the next statement fails, typed
  return { client: pool, close: () => void pool.end() };
}

/** An ioredis client, connected (the CLI's client, whichever one the app uses: the stored values are the same). */
export async function connect(url: string): Promise<{ client: RedisClientLike; close(): void }> {
  let Redis: typeof import('ioredis').Redis;
  try {
    ({ Redis } = await import('ioredis'));
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ERR_MODULE_NOT_FOUND') throw new CliError('needs ioredis to reach Redis: npm install ioredis');
    throw error;
  }
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  let first: unknown; // what went wrong: connect() itself rejects with "Connection is closed."
  client.on('error', (error) => (first ??= error));
  await client.connect().catch((error: unknown) => {
    throw new CliError(`could not connect to Redis: ${networkError(first ?? error)}`);
  });
  return { client, close: () => client.disconnect() };
}

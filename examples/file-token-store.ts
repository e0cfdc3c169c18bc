/**
 * A TokenStore that keeps one user's tokens in a JSON file, used with TokenManager (Node only).
 *
 * Shows: what a TokenStore must do (get, set, and lock), an atomic write (temp file + rename, so a crash never
 * leaves half a file), a file only its owner can read (mode 0o600: it holds a refresh token, a password), and a
 * lock that makes one process's TokenManagers refresh one at a time.
 *
 *   npm install @postsched/sdk && npm install -D tsx   # tsx runs the TypeScript file as it is
 *
 * Against the local mock of the service (in a clone of this repository, `npm run mock` instead of `npx postsched mock`):
 *   npx postsched mock                                     # terminal 1: paste its export lines into terminal 2
 *   npx postsched login --out .postsched/tokens.json       # terminal 2: open the URL it prints, Allow
 *   npx tsx examples/file-token-store.ts                   # terminal 2
 *
 * Against a real service, set POSTSCHED_BASE_URL, POSTSCHED_CLIENT_ID, POSTSCHED_CLIENT_SECRET and
 * POSTSCHED_REDIRECT_URI yourself; POSTSCHED_TOKEN_FILE defaults to .postsched/tokens.json.
 *
 * Run directly, it lists the accounts of the user whose tokens are in POSTSCHED_TOKEN_FILE, refreshing them
 * (and saving the rotated refresh token to the file) when they expired.
 *
 * When to use Redis instead (`RedisTokenStore` from '@postsched/sdk/redis'): as soon as more than one process
 * uses the same tokens (several servers, workers, serverless instances). The lock here only covers one
 * process; two processes refreshing at once would each spend the refresh token, and with rotation one of
 * them would be logged out. A file is right for a CLI, a desktop app, or a single long-running server.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  OAuthClient,
  PostSched,
  ReauthorizationRequiredError,
  TokenManager,
  type TokenSet,
  type TokenStore,
  type TokenStoreSetOptions,
} from '@postsched/sdk';

/**
 * One user's TokenSet in a JSON file. Writes are atomic and serialized; `lock` serializes refreshes of every
 * TokenManager of this process that shares this store.
 */
export class FileTokenStore implements TokenStore {
  readonly path: string;
  /** Writes run one after another, so an older TokenSet can never land after a newer one. */
  #writes: Promise<void> = Promise.resolve();
  /** The lock's queue: each holder runs after the previous one settled. */
  #lockTail: Promise<void> = Promise.resolve();

  constructor(path: string) {
    if (typeof path !== 'string' || path === '') throw new TypeError('FileTokenStore needs the path of the JSON file');
    this.path = path;
  }

  async get(): Promise<TokenSet | undefined> {
    await this.#writes; // a get() after set() sees what set() wrote
    return this.#read();
  }

  async #read(): Promise<TokenSet | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // nobody logged in yet
      throw error;
    }
    try {
      return JSON.parse(text) as TokenSet;
    } catch {
      // Our own message: the parser's would quote the file, and the file holds tokens.
      throw new Error(`Token file ${this.path} is not valid JSON; delete it and log in again.`);
    }
  }

  /**
   * With `expectedRefreshToken` (after a refresh), a compare-and-set: the file is written only if it still holds
   * that refresh token (or nothing, or these tokens already); otherwise it is left alone and `false` returned,
   * so a late write can never put older tokens over newer ones. Within one process the serialized writes make
   * the check and the write one step.
   */
  set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<boolean> {
    const write = this.#writes.then(async () => {
      const expected = options?.expectedRefreshToken;
      if (expected !== undefined) {
        const stored = await this.#read();
        const same = stored?.accessToken === tokens.accessToken && stored?.refreshToken === tokens.refreshToken;
        if (stored !== undefined && stored.refreshToken !== expected && !same) return false;
      }
      await this.#writeAtomically(JSON.stringify(tokens));
      return true;
    });
    this.#writes = write.then(
      () => undefined,
      () => undefined, // one failed write must not block the next ones
    );
    return write;
  }

  /** Runs `fn` alone among the callers of this store's lock in this process (see the top of the file for several processes). */
  lock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lockTail.then(fn);
    this.#lockTail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  async #writeAtomically(text: string): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    // Same directory, so rename() is atomic (same file system); a unique name, so two writers never share it.
    const temp = `${this.path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    // 'wx': create, never follow or reuse an existing file; 0o600 from the first byte, before any token is in it.
    const file = await open(temp, 'wx', 0o600);
    try {
      await file.writeFile(text, 'utf8');
      await file.sync(); // on disk before the rename makes it the token file
    } catch (error) {
      await file.close();
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await file.close();
    try {
      await chmod(temp, 0o600); // the umask may have taken bits away, never adds them; this makes it exact
      await rename(temp, this.path);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
  }
}

/** What the script needs, from environment variables. */
export interface Config {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  tokenFile: string;
}

export function configFromEnv(env: Record<string, string | undefined> = process.env): Config {
  const need = (name: string): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`Set ${name} (see the top of examples/file-token-store.ts).`);
    return value;
  };
  return {
    baseUrl: need('POSTSCHED_BASE_URL'),
    clientId: need('POSTSCHED_CLIENT_ID'),
    clientSecret: need('POSTSCHED_CLIENT_SECRET'),
    redirectUri: need('POSTSCHED_REDIRECT_URI'),
    tokenFile: env.POSTSCHED_TOKEN_FILE ?? '.postsched/tokens.json',
  };
}

/** A TokenManager whose tokens live in the file: every refreshed TokenSet is written there before use. */
export function createTokenManager(config: Config): TokenManager {
  // Only the OAuthClient's own options: it refuses any other key (`tokenFile` is this example's).
  const { baseUrl, clientId, clientSecret, redirectUri } = config;
  const oauth = new OAuthClient({ baseUrl, clientId, clientSecret, redirectUri });
  return new TokenManager({ oauth, store: new FileTokenStore(config.tokenFile) });
}

/** Lists the stored user's accounts; returns their names (the id of an account the service sent no name for). */
export async function main(config: Config = configFromEnv()): Promise<string[]> {
  const manager = createTokenManager(config);
  const client = new PostSched({ baseUrl: config.baseUrl, auth: manager });
  const names: string[] = [];
  try {
    for await (const account of client.accounts.list()) {
      // `platform` and `name` are the SDK's assumptions about the service (only `id` is in its spec): check them.
      const name = typeof account.name === 'string' ? account.name : account.id;
      console.log(`${(typeof account.platform === 'string' ? account.platform : '?').padEnd(10)} ${name} (${account.id})`);
      names.push(name);
    }
  } catch (error) {
    if (error instanceof ReauthorizationRequiredError) {
      // 'no_tokens' (empty file) or 'invalid_grant' (refresh token revoked, expired or already used).
      console.error(`Log in again: ${error.message}`);
      process.exitCode = 1;
      return names;
    }
    throw error;
  }
  return names;
}

// Run only when executed directly, not when imported (by your app or a test). Not a top-level await: it fails in a
// CommonJS project (npm init's default); an error main() does not handle still ends the process with its stack.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void main();
}

/**
 * What every `postsched` command shares: its shape, argument parsing on `node:util` parseArgs (no CLI framework:
 * three commands do not need one), and the two kinds of failure a user can cause.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Exit codes, the same for every command (`postsched --help` lists them). */
export const EXIT = {
  ok: 0,
  /** The command ran and failed: the receiver refused a delivery, the sign-in failed, a port was taken. */
  failed: 1,
  /** The command line is wrong. */
  usage: 2,
  /** Stopped with Ctrl-C before it finished (128 + SIGINT). */
  interrupted: 130,
} as const;

/** A mistake on the command line: printed with a pointer to `--help`, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A failure the user can act on (a port in use, a refused sign-in): printed as is, exit code 1. */
export class CliError extends Error {
  override readonly name = 'CliError';
}

/** What a command gets besides its arguments. */
export interface CommandContext {
  /** The environment (defaults of options such as `--base-url` come from it). */
  readonly env: NodeJS.ProcessEnv;
  /** Aborted on Ctrl-C (SIGINT) or SIGTERM: stop, clean up, return. */
  readonly signal: AbortSignal;
  /** A line for the user (stdout). */
  out(line: string): void;
  /** A warning or an error line (stderr). */
  err(line: string): void;
}

export interface Command {
  readonly name: string;
  /** One line for `postsched --help`. */
  readonly summary: string;
  /** The whole `postsched <name> --help` text. */
  readonly help: string;
  /** Runs the command; resolves to its exit code. */
  run(args: string[], context: CommandContext): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs with `--help` added, and its errors turned into `UsageError`s. */
export function parse<O extends Options>(
  args: string[],
  options: O,
  allowPositionals = false,
): ReturnType<typeof parseArgs<{ args: string[]; options: O & { help: { type: 'boolean'; short: 'h' } }; allowPositionals: boolean; strict: true }>> {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true });
  } catch (error) {
    // node:util's messages name the option ("Unknown option '--prot'"); its code says it was the user's input.
    if (error instanceof Error && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(error.message.split('. To specify')[0] ?? error.message);
    }
    throw error;
  }
}

/** An absolute http(s) URL given as `--name`, or a `UsageError` that says what is wrong with it. */
export function httpUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--${name} must be an absolute URL such as http://127.0.0.1:3000/webhooks; got ${JSON.stringify(value.slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--${name} must be an http or https URL; got ${url.protocol}`);
  // fetch refuses a URL with credentials, and the URL is printed: refused here, without echoing them.
  if (url.username !== '' || url.password !== '') throw new UsageError(`--${name} must not hold a user name or password (user:pass@); got ${url.origin}`);
  return url;
}

/** A port number given as `--name` (0 picks a free one). */
export function port(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d{1,5}$/.test(value) || n > 65_535) throw new UsageError(`--${name} must be a port number from 0 to 65535; got ${JSON.stringify(value.slice(0, 50))}`);
  return n;
}

/** A positive number of seconds given as `--name`. */
export function seconds(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 86_400) throw new UsageError(`--${name} must be a number of seconds between 0 and 86400; got ${JSON.stringify(value.slice(0, 50))}`);
  return n;
}

/** `--name`, else the environment variable, else a `UsageError` naming both. */
export function required(name: string, value: string | undefined, envVar: string, env: NodeJS.ProcessEnv): string {
  const found = value ?? env[envVar];
  if (found === undefined || found === '') throw new UsageError(`pass --${name} or set ${envVar}`);
  return found;
}

/** Resolves when `signal` aborts (at once if it already has). */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** "ECONNREFUSED", "bad port", "fetch failed": the most specific words a failed fetch has. */
export function networkError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string' && cause.message !== '') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

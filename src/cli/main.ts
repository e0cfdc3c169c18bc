/**
 * `postsched`: dispatches to a command, maps failures to exit codes and one-line messages (a stack trace only
 * for a bug), and turns the first Ctrl-C into a clean stop (the second one exits at once).
 */
import { readFileSync } from 'node:fs';
import { PostSchedError } from '../core/base-error.js';
import { CliError, type Command, type CommandContext, EXIT, UsageError } from './command.js';
import { loginCommand } from './login.js';
import { mcpCommand } from './mcp.js';
import { mockCommand } from './mock.js';
import { rekeyCommand } from './rekey.js';
import { triggerCommand } from './trigger.js';

const COMMANDS: readonly Command[] = [mockCommand, triggerCommand, loginCommand, rekeyCommand, mcpCommand];

const HELP = `Usage: postsched <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(9)} ${c.summary}`).join('\n')}

Run "postsched <command> --help" for its options.

Exit codes: 0 done, 1 failed, 2 wrong command line, 130 stopped with Ctrl-C.`;

/** Runs `postsched` with `argv` (without node and the script); resolves to the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [name, ...args] = argv;
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const warn = (line: string) => process.stderr.write(`${line}\n`);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    say(HELP);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === '--version' || name === '-v') {
    say(version());
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    warn(`postsched: unknown command ${JSON.stringify(name.slice(0, 50))}. Commands: ${COMMANDS.map((c) => c.name).join(', ')}.`);
    warn('Run "postsched --help" for more.');
    return EXIT.usage;
  }

  const stop = new AbortController();
  const onSignal = () => {
    if (stop.signal.aborted) process.exit(EXIT.interrupted); // a second Ctrl-C: stop waiting for the clean-up
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const context: CommandContext = { env, signal: stop.signal, out: say, err: warn };
  try {
    return await command.run(args, context);
  } catch (error) {
    if (error instanceof UsageError) {
      warn(`postsched ${command.name}: ${error.message}`);
      warn(`Run "postsched ${command.name} --help" for its options.`);
      return EXIT.usage;
    }
    if (error instanceof CliError || error instanceof PostSchedError) {
      // An SDK error's message says what was wrong and what to do; it never holds a secret.
      warn(`postsched ${command.name}: ${error instanceof PostSchedError ? `${error.name}: ` : ''}${error.message}`);
      return EXIT.failed;
    }
    warn(`postsched ${command.name}: unexpected error (a bug in postsched; please report it with this output):`);
    warn(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return EXIT.failed;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** The package's version: package.json is two folders up from both src/cli/ and dist/cli/. */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

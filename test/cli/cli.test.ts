/** The `postsched` executable's conventions, run as a child process: help, exit codes, no stack traces for user errors. */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/processes.js';

/** A line of a stack trace, which a user's mistake must never print. */
const STACK = /^\s+at /m;

describe('postsched', () => {
  it('lists its commands and the exit codes with --help (exit 0), and without a command (exit 2)', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: postsched <command> \[options\]/);
    for (const name of ['mock', 'trigger', 'login', 'rekey']) expect(help.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(help.stdout).toContain('Exit codes: 0 done, 1 failed, 2 wrong command line, 130 stopped with Ctrl-C.');
    const bare = await runCli([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe(help.stdout);
  });

  it.each(['mock', 'trigger', 'login', 'rekey'])('postsched %s --help prints its usage and options, exit 0', async (name) => {
    const { code, stdout, stderr } = await runCli([name, '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^Usage: postsched ${name}`));
    expect(stdout).toContain('-h, --help');
    expect(stderr).toBe('');
  });

  it('prints its version', async () => {
    const { code, stdout } = await runCli(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([
    [['deploy'], /^postsched: unknown command "deploy"\. Commands: mock, trigger, login, rekey, mcp\./],
    [['mock', '--prot', '1'], /^postsched mock: Unknown option '--prot'\nRun "postsched mock --help" for its options\.\n$/],
    [['mock', '--port', 'eighty'], /^postsched mock: --port must be a port number from 0 to 65535; got "eighty"/],
    [['mock', '--profile', 'everything'], /^postsched mock: --profile must be one of full, minimal, noisy; got "everything"/],
    [['mock', '--webhook-url', 'localhost:3000'], /^postsched mock: --webhook-url must be an http or https URL; got localhost:/],
    // Every delivery would fail (fetch refuses credentials), and the mock printed the URL, password and all.
    [['mock', '--webhook-url', 'http://hook:pa55word@127.0.0.1:3000/webhooks'], /^postsched mock: --webhook-url must not hold a user name or password \(user:pass@\); got http:\/\/127\.0\.0\.1:3000\n/],
    [['trigger'], /^postsched trigger: name the event: postsched trigger <event> --to <url>/],
  ])('postsched %j is a usage error: one message, exit 2, no stack trace', async (args, message) => {
    const { code, stdout, stderr } = await runCli(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(STACK);
    expect(stdout).toBe('');
  });
});

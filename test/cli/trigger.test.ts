/** `postsched trigger` as a child process, against receivers on 127.0.0.1. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook, type WebhookEvent } from '@postsched/sdk/webhooks';
import { runCli } from '../support/processes.js';

const SECRET = 'whsec_trigger_test';
const STACK = /^\s+at /m;

/** A receiver answering `status` (with `answer` as its body) after verifying with the SDK, or never answering. */
async function receiver(
  status: number | 'hang',
  answer = 'invalid payload: missing field "foo"',
): Promise<{ url: string; events: WebhookEvent[]; errors: string[]; server: Server }> {
  const events: WebhookEvent[] = [];
  const errors: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (status === 'hang') return;
      try {
        events.push(await verifyWebhook({ body: Buffer.concat(chunks), signature: req.headers, secret: SECRET }));
      } catch (error) {
        errors.push(String(error));
      }
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(status === 204 ? undefined : answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, events, errors, server };
}

describe('postsched trigger', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
    server = undefined;
  });

  it('sends one delivery signed as the service signs it, with --data merged, and prints the status: exit 0', async () => {
    const r = await receiver(204);
    server = r.server;
    const { code, stdout } = await runCli(['trigger', 'post.published', '--to', r.url, '--data', '{"id":"post_42","account_ids":["acc_1"]}'], {
      POSTSCHED_WEBHOOK_SECRET: SECRET,
    });
    expect(r.errors).toEqual([]);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^POST ${r.url} \\(post\\.published, \\d+ bytes, signed\\)\\n✔ 204 No Content in \\d+ ms\\n$`));
    expect(r.events).toHaveLength(1);
    const event = r.events[0] as Extract<WebhookEvent, { event: 'post.published' }>;
    expect(event.event).toBe('post.published');
    expect(event.data).toMatchObject({ id: 'post_42', account_ids: ['acc_1'] });
    expect(Math.abs(Date.parse(event.data.published_at) - Date.now())).toBeLessThan(60_000); // "now", not a fixture date
  });

  it.each(['post.scheduled', 'post.failed', 'post.deleted'])('sends %s with --secret', async (name) => {
    const r = await receiver(204);
    server = r.server;
    const { code } = await runCli(['trigger', name, '--to', r.url, '--secret', SECRET]);
    expect(code).toBe(0);
    expect(r.events.map((e) => e.event)).toEqual([name]);
  });

  it("exits 1 when the receiver refuses the delivery, showing the start of its answer", async () => {
    const r = await receiver(400);
    server = r.server;
    const { code, stdout, stderr } = await runCli(['trigger', 'post.failed', '--to', r.url, '--secret', SECRET]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/✘ 400 Bad Request in \d+ ms\ninvalid payload: missing field "foo"\n$/);
    expect(stderr).toBe('The receiver did not accept the delivery (HTTP 400); the service would retry it.\n');
  });

  it('shows an answer that holds terminal escapes with every control character escaped', async () => {
    const hostile = [
      '\u001b[2J\u001b[H', // clear the screen, cursor home
      '\u001b]52;c;ZWNobyBwd25lZA==\u0007', // OSC 52: write the clipboard, ended by BEL
      '\u009b31m', // C1 CSI: red text
      '\u0007', // BEL
      'line\r\nforged: ok',
      ` echoed ${SECRET}`,
    ].join('');
    const r = await receiver(500, hostile);
    server = r.server;
    const { code, stdout } = await runCli(['trigger', 'post.failed', '--to', r.url, '--secret', SECRET]);
    expect(code).toBe(1);
    expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/); // no control character but the line ends
    expect(stdout.split('\n').at(-2)).toBe(
      '\\u001b[2J\\u001b[H\\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u009b31m\\u0007line\\r\\nforged: ok echoed [redacted]',
    );
  });

  /** A receiver that answers with `answer(res)` whatever it is sent. */
  async function rawReceiver(answer: (res: import('node:http').ServerResponse) => void): Promise<string> {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(res));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  }

  it('exits 1 without a stack trace when the answer breaks off, or stalls past --timeout, after its status', async () => {
    const dropped = await rawReceiver((res) => {
      res.writeHead(200, { 'content-length': '1000' }).write('partial');
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const broken = await runCli(['trigger', 'post.failed', '--to', dropped, '--secret', SECRET]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/✘ 200 OK in \d+ ms\npartial\n$/);
    expect(broken.stderr).toMatch(/^The receiver did not accept the delivery \(its answer broke off: \S+\); the service would retry it\.\n$/);
    server!.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));

    const trickling = await rawReceiver((res) => {
      res.writeHead(200).write('a');
      const timer = setInterval(() => res.write('b'), 50);
      res.on('close', () => clearInterval(timer));
    });
    const stalled = await runCli(['trigger', 'post.failed', '--to', trickling, '--secret', SECRET, '--timeout', '0.5']);
    expect(stalled.code).toBe(1);
    expect(stalled.stdout).toMatch(/✘ 200 OK in \d+ ms\nab+\n$/);
    expect(stalled.stderr).toBe('The receiver did not accept the delivery (its answer broke off: no more of it within 0.5 s); the service would retry it.\n');
  });

  it('never shows a part of the secret where the shown start of the answer is cut', async () => {
    const secret = 'whsec_a_long_signing_secret_0123456789';
    const url = await rawReceiver((res) => res.writeHead(500).end(`${'x'.repeat(490)}${secret}`));
    const { code, output } = await runCli(['trigger', 'post.failed', '--to', url, '--secret', secret]);
    expect(code).toBe(1);
    expect(output).not.toContain(secret.slice(0, 10));
    expect(output).toContain(`${'x'.repeat(490)}[redacted]`);
  });

  it('exits 1 with one line when nothing listens there, or nothing answers in time', async () => {
    const refused = await runCli(['trigger', 'post.failed', '--to', 'http://127.0.0.1:9/webhooks', '--secret', SECRET]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^postsched trigger: could not reach http:\/\/127\.0\.0\.1:9: \S+/);
    expect(refused.stderr).not.toMatch(STACK);

    const r = await receiver('hang');
    server = r.server;
    const silent = await runCli(['trigger', 'post.failed', '--to', r.url, '--secret', SECRET, '--timeout', '0.5']);
    expect(silent.code).toBe(1);
    expect(silent.stderr).toBe(`postsched trigger: no answer from ${new URL(r.url).origin} within 0.5 s\n`);
  });

  it.each([
    [['post.publish', '--to', 'http://127.0.0.1:9/'], /unknown event "post\.publish": use one of post\.scheduled, post\.published, post\.failed, post\.deleted/],
    [['post.failed'], /pass --to <url>/],
    [['post.failed', '--to', 'http://127.0.0.1:9/', '--data', '{id:1}'], /--data is not valid JSON/],
    [['post.failed', '--to', 'http://127.0.0.1:9/', '--data', '[1]'], /--data must be a JSON object/],
    [['post.failed', '--to', 'http://127.0.0.1:9/', '--secret', SECRET, '--timeout', '0'], /--timeout must be a number of seconds/],
    // fetch refuses it; it was printed, password and all, twice.
    [['post.failed', '--to', 'http://hook:pa55word@127.0.0.1:9/'], /^postsched trigger: --to must not hold a user name or password \(user:pass@\); got http:\/\/127\.0\.0\.1:9\n/],
  ])('postsched trigger %j is a usage error (exit 2)', async (args, message) => {
    const { code, stdout, stderr } = await runCli(['trigger', ...args], { POSTSCHED_WEBHOOK_SECRET: SECRET });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(STACK);
    expect(`${stdout}${stderr}`).not.toContain('pa55word');
  });

  it('needs a secret: --secret or POSTSCHED_WEBHOOK_SECRET', async () => {
    const { code, stderr } = await runCli(['trigger', 'post.failed', '--to', 'http://127.0.0.1:9/'], { POSTSCHED_WEBHOOK_SECRET: undefined });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^postsched trigger: pass --secret or set POSTSCHED_WEBHOOK_SECRET\n/);
  });
});

/**
 * `postsched trigger <event> --to URL`: one webhook delivery, signed as the service signs (spec: "Webhook
 * signature"), to test a webhook endpoint by hand. Prints the receiver's status and how long it took, and the start
 * of its answer with control characters escaped (a receiver's text must not drive the user's terminal).
 */
import { escapeControl, scrubSecrets } from '../core/scrub.js';
import { webhookFixture } from '../testing/webhook-fixtures.js';
import { signWebhook, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../webhooks/node.js';
import { CliError, type Command, EXIT, httpUrl, networkError, parse, required, seconds, UsageError } from './command.js';

/** What is shown of the receiver's answer (its first bytes); the rest is not read. */
const SHOWN_BYTES = 500;

const HELP = `Usage: postsched trigger <event> --to <url> [options]

Sends one webhook delivery, signed with X-Service-Signature as the service signs it, and prints the
receiver's status and time. <event> is one of: ${WEBHOOK_EVENT_TYPES.join(', ')}.

Options:
  --to <url>          The receiver (your webhook endpoint)
  --secret <s>        Signing secret (default: $POSTSCHED_WEBHOOK_SECRET)
  --data <json>       Fields merged into the event's data, e.g. '{"id":"post_42"}'
  --timeout <s>       How long to wait for the receiver (default 10)
  -h, --help          This help

Exit code 0 when the receiver answered 2xx, 1 otherwise.

Example:
  npx postsched trigger post.published --to http://127.0.0.1:3000/webhooks/postsched --data '{"id":"post_42"}'`;

export const triggerCommand: Command = {
  name: 'trigger',
  summary: 'send one signed webhook delivery to your endpoint',
  help: HELP,
  async run(args, context) {
    const { values, positionals } = parse(
      args,
      { to: { type: 'string' }, secret: { type: 'string' }, data: { type: 'string' }, timeout: { type: 'string' } },
      true,
    );
    if (values.help === true) {
      context.out(HELP);
      return EXIT.ok;
    }
    const [event, ...extra] = positionals;
    if (event === undefined) throw new UsageError(`name the event: postsched trigger <event> --to <url>, with <event> one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    if (extra.length > 0) throw new UsageError(`one event at a time; unexpected ${JSON.stringify(extra[0])}`);
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(event)) {
      throw new UsageError(`unknown event ${JSON.stringify(event.slice(0, 50))}: use one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    }
    if (values.to === undefined) throw new UsageError('pass --to <url>: the webhook endpoint to deliver to');
    const to = httpUrl('to', values.to);
    const secret = required('secret', values.secret, 'POSTSCHED_WEBHOOK_SECRET', context.env);
    const timeoutMs = seconds('timeout', values.timeout ?? '10') * 1000;

    const now = new Date().toISOString();
    const data = { ...(event === 'post.published' ? { published_at: now } : {}), ...parseData(values.data) };
    const body = JSON.stringify(webhookFixture(event as WebhookEventType, { created_at: now, data }));
    const signature = await signWebhook({ body, secret });

    context.out(`POST ${to.href} (${event}, ${body.length} bytes, signed)`);
    const started = performance.now();
    let response: Response;
    try {
      response = await fetch(to, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'postsched-cli', 'x-service-signature': signature },
        body,
        redirect: 'manual', // the service does not follow redirects to deliver; a 30x is an answer to show
        signal: AbortSignal.any([context.signal, AbortSignal.timeout(timeoutMs)]),
      });
    } catch (error) {
      if (context.signal.aborted) return EXIT.interrupted;
      if (error instanceof Error && error.name === 'TimeoutError') throw new CliError(`no answer from ${to.origin} within ${timeoutMs / 1000} s`);
      throw new CliError(`could not reach ${to.origin}: ${networkError(error)}`);
    }
    const elapsed = Math.round(performance.now() - started);
    const [shown, brokeOff] = await firstBytes(response, secret, timeoutMs);
    if (context.signal.aborted) return EXIT.interrupted;
    // An answer that broke off is no answer: a service would retry the delivery.
    const ok = response.status >= 200 && response.status < 300 && brokeOff === '';
    context.out(`${ok ? '✔' : '✘'} ${response.status} ${escapeControl(response.statusText)} in ${elapsed} ms`.trimEnd());
    if (shown !== '') context.out(shown);
    if (!ok) context.err(`The receiver did not accept the delivery (${brokeOff || `HTTP ${response.status}`}); the service would retry it.`);
    return ok ? EXIT.ok : EXIT.failed;
  },
};

function parseData(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--data is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new UsageError('--data must be a JSON object, e.g. \'{"id":"post_42"}\'');
  return data as Record<string, unknown>;
}

/**
 * The first bytes of the answer's body as text, the secret cut out and control characters escaped; the rest is
 * cancelled, never read. With it, why the body broke off (an error, or no more of it within the time-out), or ''.
 */
async function firstBytes(response: Response, secret: string, timeoutMs: number): Promise<[shown: string, brokeOff: string]> {
  if (response.body === null) return ['', ''];
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let broken = '';
  try {
    // The secret's length more than is shown, so that one starting in the shown part is cut out whole.
    while (size < SHOWN_BYTES + secret.length) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    broken = `its answer broke off: ${escapeControl(timedOut ? `no more of it within ${timeoutMs / 1000} s` : networkError(error))}`;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const text = scrubSecrets(new TextDecoder().decode(Buffer.concat(chunks)), [secret]).trim();
  return [escapeControl(text.length > SHOWN_BYTES ? `${text.slice(0, SHOWN_BYTES)}…` : text), broken];
}

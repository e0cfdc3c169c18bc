/**
 * `postsched mock`: the fake service of `@postsched/sdk/testing` on 127.0.0.1, on the real clock, with the consent
 * page on, for running an app or the examples by hand. It prints `export` lines to paste, then one line per
 * request and per webhook delivery.
 */
import { createFakeService, type FakeService } from '../testing/fake-service/create.js';
import { listenOnLoopback, type ListeningFakeService } from '../testing/fake-service/listen.js';
import type { RefreshPolicy } from '../testing/fake-service/state.js';
import type { WireProfile } from '../testing/fake-service/wire-profile.js';
import { aborted, CliError, type Command, type CommandContext, EXIT, httpUrl, networkError, parse, port, UsageError } from './command.js';

export const MOCK_DEFAULTS = {
  port: 4010,
  clientId: 'postsched_mock_client',
  clientSecret: 'postsched_mock_secret',
  webhookSecret: 'whsec_postsched_mock',
  /** The examples' redirect URI, and `postsched login`'s. */
  redirectUris: ['http://127.0.0.1:3000/callback', 'http://127.0.0.1:8976/callback'],
} as const;

const PROFILES: readonly WireProfile[] = ['full', 'minimal', 'noisy'];
const CONSENTS = ['prompt', 'approve', 'deny'] as const;
/** `--refresh-policy`: the fake's `refreshPolicy` presets (the SDK's own cases; the option says more). */
const REFRESH_POLICIES = {
  rotate: { rotation: 'rotate' },
  'reuse-detection': { rotation: 'rotate', reuseDetection: true },
  static: { rotation: 'static' },
  'retain-until-used': { rotation: 'retain-until-used' },
} as const satisfies Record<string, RefreshPolicy>;

const HELP = `Usage: postsched mock [options]

Runs the fake Post Scheduling Service on 127.0.0.1 (real clock, consent page on) and prints the
export lines to paste where you run your app or an example. Then it prints one line per request and
per webhook delivery. Ctrl-C stops it. Its state is in memory: a restart forgets every token it
issued, post and upload (connect your users again).

Options:
  --port <n>              Port on 127.0.0.1 (default ${MOCK_DEFAULTS.port}; 0 picks a free one)
  --webhook-url <url>     Deliver the webhooks to this URL (repeatable)
  --webhook-secret <s>    Signing secret of those deliveries (default ${MOCK_DEFAULTS.webhookSecret})
  --client-id <id>        The registered app's client id (default ${MOCK_DEFAULTS.clientId})
  --client-secret <s>     Its client secret (default ${MOCK_DEFAULTS.clientSecret})
  --redirect-uri <url>    Register one more redirect URI (repeatable; registered already:
                          ${MOCK_DEFAULTS.redirectUris.join(', ')})
  --consent <mode>        prompt (default: a consent page with Allow / Deny), approve or deny (at once)
  --profile <name>        Answers: full (default: every field), minimal (only what the service's spec
                          gives) or noisy (assumed fields garbled at random)
  --seed <n>              Seed of the noisy profile's choices (default 1), to replay a run
  --token-ttl <time>      Lifetime of the access tokens it issues: 60s, 5m, 1h (default 1h); a short
                          one lets you watch your app refresh them
  --refresh-policy <p>    What a used refresh token becomes: rotate (default: single use), reuse-detection
                          (single use; sent again, it revokes the user's grant), static (never changes)
                          or retain-until-used (valid until the new one is used)
  -h, --help              This help

Example:
  npx postsched mock --webhook-url http://127.0.0.1:3000/webhooks/postsched`;

export const mockCommand: Command = {
  name: 'mock',
  summary: 'run the fake service on 127.0.0.1 and print the settings to paste',
  help: HELP,
  async run(args, context) {
    const { values } = parse(args, {
      port: { type: 'string' },
      'webhook-url': { type: 'string', multiple: true },
      'webhook-secret': { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      consent: { type: 'string' },
      profile: { type: 'string' },
      seed: { type: 'string' },
      'token-ttl': { type: 'string' },
      'refresh-policy': { type: 'string' },
    });
    if (values.help === true) {
      context.out(HELP);
      return EXIT.ok;
    }
    const webhookUrls = (values['webhook-url'] ?? []).map((u) => httpUrl('webhook-url', u).href);
    const redirectUris = [...new Set([...MOCK_DEFAULTS.redirectUris, ...(values['redirect-uri'] ?? []).map((u) => httpUrl('redirect-uri', u).href)])];
    const consent = oneOf('consent', values.consent ?? 'prompt', CONSENTS);
    const profile = oneOf('profile', values.profile ?? 'full', PROFILES);
    const refreshPolicy = REFRESH_POLICIES[oneOf('refresh-policy', values['refresh-policy'] ?? 'rotate', Object.keys(REFRESH_POLICIES) as (keyof typeof REFRESH_POLICIES)[])];
    const seed = Number(values.seed ?? '1');
    if (!Number.isSafeInteger(seed)) throw new UsageError(`--seed must be an integer; got ${JSON.stringify(String(values.seed).slice(0, 50))}`);
    const settings = {
      tokenTtlSeconds: values['token-ttl'] === undefined ? 3600 : seconds('token-ttl', values['token-ttl']),
      port: values.port === undefined ? MOCK_DEFAULTS.port : port('port', values.port),
      clientId: nonEmpty('client-id', values['client-id'] ?? MOCK_DEFAULTS.clientId),
      clientSecret: nonEmpty('client-secret', values['client-secret'] ?? MOCK_DEFAULTS.clientSecret),
      webhookSecret: nonEmpty('webhook-secret', values['webhook-secret'] ?? MOCK_DEFAULTS.webhookSecret),
    };

    // The server first, so that the fake's base URL (its RFC 9207 issuer) is the URL clients really use.
    let fake: FakeService | undefined;
    let server: ListeningFakeService;
    try {
      server = await listenOnLoopback((request) => logged(fake as FakeService, request, context), settings.port, '');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') {
        throw new CliError(`port ${settings.port} of 127.0.0.1 is in use (another postsched mock?): stop it, or pass --port <n> (0 picks a free one)`);
      }
      if (code === 'EACCES') throw new CliError(`port ${settings.port} needs privileges: pass --port <n> above 1023`);
      throw error;
    }
    fake = createFakeService({
      baseUrl: server.url,
      clock: 'real',
      consent,
      apps: [{ clientId: settings.clientId, clientSecret: settings.clientSecret, redirectUris, name: 'Your app (postsched mock)' }],
      webhookEndpoints: webhookUrls.map((url) => ({ url, secret: settings.webhookSecret })),
      webhooks: { fetch: loggedDelivery(context) },
      profile,
      seed,
      accessTokenTtlSeconds: settings.tokenTtlSeconds,
      refreshPolicy,
    });
    const token = fake.issueTokens({ clientId: settings.clientId });

    context.out(`postsched mock: the fake Post Scheduling Service on ${server.url} (real clock, consent: ${consent}, profile: ${profile})`);
    context.out('');
    context.out('Paste into the shell where you run your app or an example:');
    context.out('');
    for (const [name, value] of [
      ['POSTSCHED_BASE_URL', server.url],
      ['POSTSCHED_CLIENT_ID', settings.clientId],
      ['POSTSCHED_CLIENT_SECRET', settings.clientSecret],
      ['POSTSCHED_REDIRECT_URI', redirectUris[0] as string],
      ['POSTSCHED_WEBHOOK_SECRET', settings.webhookSecret],
      ['POSTSCHED_ACCESS_TOKEN', token.access_token],
      ['POSTSCHED_ACCOUNT_ID', 'acc_demo_x'],
    ] as const) {
      context.out(`export ${name}=${shellQuote(value)}`);
    }
    context.out('');
    context.out(`The access token has every scope and expires in ${lifetime(token.expires_in)}, as every access token it issues (--token-ttl).`);
    context.out('State is in memory: a restart forgets every token, post and upload (users connect again; postsched login for a new token).');
    context.out(`Redirect URIs: ${redirectUris.join(', ')}`);
    context.out('Accounts: acc_demo_x (x), acc_demo_linkedin (linkedin)');
    context.out(
      webhookUrls.length === 0
        ? 'Webhooks: none (add --webhook-url <url> to receive them)'
        : `Webhooks: ${webhookUrls.join(', ')}, signed with POSTSCHED_WEBHOOK_SECRET`,
    );
    context.out('Ctrl-C stops it.');
    context.out('');

    await aborted(context.signal);
    await fake.close();
    await server.close();
    context.out('postsched mock: stopped');
    return EXIT.ok;
  },
};

/** Answers through the fake and prints one line: time, method, path (never the query: it may hold a state), status, duration. */
async function logged(fake: FakeService, request: Request, context: CommandContext): Promise<Response> {
  const started = performance.now();
  const { pathname, search } = new URL(request.url);
  const path = `${pathname.slice(0, 200)}${search === '' ? '' : '?…'}`;
  try {
    const response = await fake.handler(request);
    context.out(`${time()} ${request.method} ${path} → ${response.status} (${ms(started)})`);
    return response;
  } catch (error) {
    context.out(`${time()} ${request.method} ${path} → connection dropped (${ms(started)})`);
    throw error;
  }
}

/** The fake's webhook `fetch`, printing one line per delivery attempt. */
function loggedDelivery(context: CommandContext) {
  return async (url: string, init: RequestInit): Promise<Response> => {
    const started = performance.now();
    let event = 'event';
    try {
      event = (JSON.parse(String(init.body)) as { event: string }).event;
    } catch {
      // the fake always sends JSON; the line still says where it went
    }
    try {
      const response = await fetch(url, init);
      context.out(`${time()} webhook ${event} → ${url}: ${response.status} (${ms(started)})`);
      return response;
    } catch (error) {
      const why = init.signal?.aborted === true ? 'no answer in time' : `not delivered (${networkError(error)})`;
      context.out(`${time()} webhook ${event} → ${url}: ${why}`);
      throw error;
    }
  };
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value.slice(0, 50))}`);
  return value as T;
}

/** `60s`, `5m`, `1h` or a number of seconds, from 1 s to 30 days, in seconds. */
function seconds(name: string, value: string): number {
  const [, n, unit] = /^(\d{1,7})(s|m|h)?$/.exec(value.trim()) ?? [];
  const total = Number(n) * (unit === 'h' ? 3600 : unit === 'm' ? 60 : 1);
  if (n === undefined || total < 1 || total > 30 * 86_400) {
    throw new UsageError(`--${name} must be a time from 1s to 720h, such as 60s, 5m or 1h; got ${JSON.stringify(value.slice(0, 50))}`);
  }
  return total;
}

/** "90 s", "5 minutes", "1 hour": an access token's lifetime, as the banner says it. */
function lifetime(s: number): string {
  if (s < 120 || s % 60 !== 0) return `${s} s`;
  if (s % 3600 !== 0) return `${s / 60} minutes`;
  return s === 3600 ? '1 hour' : `${s / 3600} hours`;
}

function nonEmpty(name: string, value: string): string {
  if (value.trim() === '') throw new UsageError(`--${name} must not be empty`);
  return value;
}

/** A value as the shell reads it back: bare when it is safe, else in single quotes. */
function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

const time = () => new Date().toISOString().slice(11, 19);
const ms = (started: number) => `${Math.round(performance.now() - started)} ms`;

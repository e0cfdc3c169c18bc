/**
 * The whole flow of an app using @postsched/sdk, start to finish: `npm run demo`.
 *
 * By default it starts the bundled fake of the service and a webhook receiver, both on 127.0.0.1, and walks
 * through: authorize (PKCE) → code exchange → accounts → media upload with progress → schedule a post a few
 * seconds ahead → the signed `post.scheduled` and `post.published` webhooks, verified → analytics → an
 * access token that expires on the service, refreshed automatically on the next call.
 *
 * POSTSCHED_FAKE_PROFILE=minimal (or noisy, with POSTSCHED_FAKE_SEED=<n>) makes the fake answer only the fields the
 * service spec gives (or garble every other one): the demo then shows what a user sees when a field the SDK assumed
 * is missing ("status: not given").
 *
 * Against a service (the local mock, or a real one), set POSTSCHED_BASE_URL, POSTSCHED_CLIENT_ID,
 * POSTSCHED_CLIENT_SECRET and POSTSCHED_REDIRECT_URI: the demo prints the authorize URL, asks for the URL your
 * browser was sent back to (copy it from the address bar, even if the page did not load), then schedules a post
 * a day ahead and cancels it (nothing is published). With the mock (in a clone of this repository, `npm run mock`
 * instead of `npx postsched mock`):
 *   npx postsched mock        # terminal 1: paste its export lines into terminal 2
 *   npm run demo              # terminal 2
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline/promises';
import { OAuthClient, PostSched, TokenManager, type Scope, type TokenSet } from '@postsched/sdk';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from '@postsched/sdk/webhooks';
import { createFakeService, type WireProfile } from '@postsched/sdk/testing';

const SCOPES: Scope[] = ['accounts:read', 'posts:read', 'posts:write', 'media:write', 'analytics:read'];
const real = process.env['POSTSCHED_BASE_URL'] !== undefined;

let stepNumber = 0;
const step = (title: string) => console.log(`\n${++stepNumber}. ${title}`);
const say = (line: string) => console.log(`   ${line}`);

/**
 * Only a post's `id` and `account_ids` and an account's `id` are in the service's spec; every other field is the
 * SDK's assumption and may be missing, or of another type, on a real service. Print what came, or say it did not.
 */
function shown(value: unknown): string {
  if (value === undefined || value === null) return 'not given';
  return typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value);
}

/** A small receiver that verifies each delivery on the raw bytes, answers 204 at once and queues the event. */
function startWebhookReceiver(secret: string) {
  const events: WebhookEvent[] = [];
  const waiters: Array<() => void> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const event = await verifyWebhook({ body: Buffer.concat(chunks), signature: req.headers, secret });
        res.writeHead(204).end();
        events.push(event);
        for (const wake of waiters.splice(0)) wake();
      } catch (error) {
        res.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
        say(`! webhook rejected: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  });
  const waitFor = async (name: string, postId: string, timeoutMs = 15_000): Promise<WebhookEvent> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = events.find((e) => e.event === name && e.data.id === postId);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no ${name} webhook for ${postId} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 250);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  return { server, waitFor };
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

/** A made-up 640 KB "image", so the progress bar has something to show. */
function demoImage(): Uint8Array {
  const bytes = new Uint8Array(640 * 1024);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]); // PNG signature
  for (let i = 8; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
  return bytes;
}

function progressBar(loaded: number, total: number | undefined): string {
  if (total === undefined) return `${(loaded / 1024).toFixed(0)} KB`;
  const filled = Math.round((loaded / total) * 24);
  return `[${'#'.repeat(filled)}${'.'.repeat(24 - filled)}] ${((loaded / total) * 100).toFixed(0).padStart(3)}%`;
}

async function main(): Promise<void> {
  console.log(`Post Scheduling Service demo (${real ? process.env['POSTSCHED_BASE_URL'] : 'bundled fake service on 127.0.0.1'})`);

  // --- The service: the fake, or the real one from the environment.
  const webhookSecret = 'whsec_demo_' + crypto.randomUUID();
  const profile = (process.env['POSTSCHED_FAKE_PROFILE'] ?? 'full') as WireProfile;
  const seed = Number(process.env['POSTSCHED_FAKE_SEED'] ?? 1);
  const fake = real ? undefined : createFakeService({ clock: 'real', profile, seed });
  const receiver = startWebhookReceiver(webhookSecret);
  let baseUrl: string;
  let clientId: string;
  let clientSecret: string;
  let redirectUri: string;
  let closeFake = async () => {};
  if (fake === undefined) {
    baseUrl = process.env['POSTSCHED_BASE_URL'] ?? '';
    clientId = process.env['POSTSCHED_CLIENT_ID'] ?? '';
    clientSecret = process.env['POSTSCHED_CLIENT_SECRET'] ?? '';
    redirectUri = process.env['POSTSCHED_REDIRECT_URI'] ?? '';
  } else {
    const receiverUrl = await listen(receiver.server);
    const listening = await fake.listen();
    closeFake = () => listening.close();
    baseUrl = listening.url;
    clientId = 'demo_app';
    clientSecret = 'demo_secret_' + crypto.randomUUID();
    redirectUri = 'http://127.0.0.1:3000/oauth/callback';
    fake.registerApp({ clientId, clientSecret, redirectUris: [redirectUri] });
    fake.registerWebhookEndpoint({ url: `${receiverUrl}/webhooks`, secret: webhookSecret });
    say(`fake service on ${baseUrl} (answers: ${profile} profile), webhook receiver on ${receiverUrl}/webhooks`);
  }

  try {
    // --- 1. Authorize: the URL the user's browser is sent to.
    const oauth = new OAuthClient({ baseUrl, clientId, clientSecret, redirectUri });
    step('Build the authorize URL (PKCE S256, random state)');
    const pending = await oauth.createAuthorizationUrl({ scopes: SCOPES });
    // The fake consents by itself, so its URL is shortened for the log; a person needs the whole URL to open it.
    say(fake === undefined ? pending.url : pending.url.replace(/(state|code_challenge)=[^&]+/g, '$1=…'));

    let callbackUrl: string;
    if (fake !== undefined) {
      step('The user approves (the fake consents automatically) and is sent back with a code');
      const answer = await fetch(pending.url, { redirect: 'manual' });
      callbackUrl = answer.headers.get('location') ?? '';
      say(`${answer.status} → ${callbackUrl.replace(/code=[^&]+/, 'code=…').replace(/state=[^&]+/, 'state=…')}`);
    } else {
      step('Open the URL above, approve, then paste the URL your browser was sent back to');
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      // With stdin closed (no terminal, `< /dev/null`) the question would never be answered: say so, and fail.
      const answer = await new Promise<string | undefined>((resolve) => {
        rl.once('close', () => resolve(undefined));
        rl.question('   callback URL: ').then(resolve, () => resolve(undefined));
      });
      rl.close();
      if (answer === undefined || answer.trim() === '') {
        throw new Error(
          'no callback URL was given (stdin is closed or the line was empty). Run the demo in a terminal and paste the URL ' +
            'your browser was sent back to, or pipe it in: echo "<callback URL>" | npm run demo. Without the POSTSCHED_* ' +
            'variables the demo runs against its bundled fake and needs no input.',
        );
      }
      callbackUrl = answer.trim();
    }

    // --- 2. Exchange the code; keep the tokens where onTokens puts them (a database in a real app).
    step('Exchange the code for tokens (state checked, code_verifier sent)');
    let saved: TokenSet | undefined;
    const manager = new TokenManager({
      oauth,
      onTokens: (tokens) => {
        saved = tokens;
        say(`tokens saved (access token valid until ${new Date(tokens.expiresAt).toISOString()})`);
      },
    });
    const tokens = await oauth.exchangeCode(callbackUrl, pending);
    await manager.setTokens(tokens);
    saved = tokens;
    say(`granted scopes: ${tokens.scopes.join(' ')}; expires in ${Math.round((tokens.expiresAt - Date.now()) / 60_000)} min`);

    const client = new PostSched({ baseUrl, auth: manager });

    // --- 3. Accounts.
    step('List the connected accounts');
    const accountIds: string[] = [];
    for await (const account of client.accounts.list()) {
      accountIds.push(account.id);
      say(`${account.id.padEnd(20)} platform: ${shown(account.platform).padEnd(10)} name: ${shown(account.name)}`);
    }
    if (accountIds.length === 0) throw new Error('the user has no connected accounts to post to');

    // --- 4. Upload, with a progress bar.
    step('Upload an image to the media library (streamed)');
    let lastLine = '';
    const media = await client.media.upload(
      { file: demoImage(), filename: 'launch.png', contentType: 'image/png' },
      {
        onProgress: ({ loaded, total }) => {
          const line = progressBar(loaded, total);
          if (line === lastLine) return;
          // Redraw in place on a terminal; one line per step in a log.
          process.stdout.write(process.stdout.isTTY ? `\r   ${line}` : `   ${line}\n`);
          lastLine = line;
        },
      },
    );
    if (process.stdout.isTTY) process.stdout.write('\n');
    const mediaId = typeof media.id === 'string' ? media.id : undefined;
    say(`media id: ${shown(media.id)}, filename: ${shown(media.filename)}, size: ${shown(media.size)}, content type: ${shown(media.content_type)}`);
    if (mediaId === undefined) say('no media id came back: the post goes without the image');

    // --- 5. Schedule a post a few seconds ahead (a day ahead on a real service, cancelled below).
    step(real ? 'Schedule a post a day ahead' : 'Schedule a post 3 seconds ahead');
    const publishAt = new Date(Date.now() + (real ? 86_400_000 : 3_000));
    const post = await client.posts.create(
      {
        account_ids: accountIds,
        publish_at: publishAt,
        text: 'Hello from the @postsched/sdk demo',
        ...(mediaId === undefined ? {} : { media_ids: [mediaId] }),
      },
      { idempotencyKey: crypto.randomUUID() },
    );
    say(`${post.id}, status: ${shown(post.status)}, publish_at: ${shown(post.publish_at)}, accounts: ${post.account_ids.join(', ')}`);

    if (fake === undefined) {
      step('Cancel it (this demo publishes nothing on a real service)');
      const cancelled = await client.posts.delete(post.id);
      say(`${post.id} cancelled, status: ${shown(cancelled?.status)}`);
      console.log('\nDone.');
      return;
    }

    // --- 6. Webhooks: signed by the service, verified by the receiver on the raw body.
    step('Wait for the signed webhooks');
    const scheduled = await receiver.waitFor('post.scheduled', post.id);
    say(`✔ ${scheduled.event} verified (created_at ${scheduled.created_at})`);
    const published = await receiver.waitFor('post.published', post.id);
    if (published.event === 'post.published') say(`✔ ${published.event} verified (published_at ${published.data.published_at})`);

    // --- 7. Analytics.
    step('Read the post analytics');
    const stats = await client.analytics.getPost(post.id);
    say(`impressions: ${shown(stats.impressions)}, likes: ${shown(stats.likes)}, shares: ${shown(stats.shares)}, clicks: ${shown(stats.clicks)}`);

    // --- 8. Token expiry: move the service's clock an hour ahead; the next call gets 401, refreshes once, retries.
    step('An hour passes on the service: the access token expires');
    const before = saved?.accessToken;
    await fake.clock.advance(61 * 60 * 1000);
    const again = await client.posts.get(post.id);
    say(`posts.get(${again.id}) → status: ${shown(again.status)}; the SDK got 401, refreshed the token once and retried`);
    say(`refresh requests: ${fake.stats.tokenRequests.refresh_token}; new access token saved: ${saved?.accessToken !== before}`);

    console.log('\nDone: the whole flow ran against the fake service.');
  } finally {
    await closeFake();
    await new Promise((resolve) => receiver.server.close(resolve));
  }
}

main().catch((error: unknown) => {
  console.error(`\nThe demo failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
  process.exitCode = 1;
});

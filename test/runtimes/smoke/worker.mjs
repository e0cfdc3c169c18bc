// The edge smoke test: the app a user deploys to an edge runtime, on the package's DEFAULT entry (Web Crypto,
// Web standards only). scripts/test-runtimes.mjs bundles it from the installed tarball as the runtimes' bundlers
// do (workerd: wrangler's conditions; Vercel's edge runtime: Next.js's), and serve.mjs serves it natively under
// Deno and Bun with `--conditions=worker`. edge.mjs drives it over HTTP against the fake service on 127.0.0.1:
//   POST /run      { baseUrl, clientId, clientSecret, redirectUri, webhookSecret }: authorize URL, code exchange,
//                  posts.create with a TokenManager
//   POST /verify   a delivery checked with verifyWebhookRequest
//   any  /handler  a delivery answered by createWebhookHandler(…).fetch
//   GET  /events   what the two webhook routes accepted
//   GET  /schedule the problems checkSchedule (schedule.mjs) finds with @postsched/sdk/schedule in this runtime
import { MemoryTokenStore, OAuthClient, PostSched, TokenManager, ValidationError } from '@postsched/sdk';
import { atLocalTime, weeklySlots } from '@postsched/sdk/schedule';
import { createWebhookHandler, verifyWebhookRequest, WebhookVerificationError } from '@postsched/sdk/webhooks';
import { checkSchedule } from './schedule.mjs';

const state = { secret: undefined, handler: undefined, verified: [], handled: [] };

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    try {
      if (pathname === '/run') return await run(await request.json());
      if (pathname === '/verify') return await verify(request);
      if (pathname === '/handler') return await state.handler.fetch(request);
      if (pathname === '/events') return Response.json({ verified: state.verified, handled: state.handled });
      if (pathname === '/schedule') return Response.json({ problems: checkSchedule({ atLocalTime, weeklySlots, ValidationError }) });
      return new Response('not found', { status: 404 });
    } catch (error) {
      return new Response(`worker error: ${error?.stack ?? error}`, { status: 599 });
    }
  },
};

async function run({ baseUrl, clientId, clientSecret, redirectUri, webhookSecret }) {
  state.secret = webhookSecret;
  state.handler = createWebhookHandler({
    secret: webhookSecret,
    on: {
      'post.scheduled': (event) => void state.handled.push(event.data.id),
      'post.failed': () => {
        throw new Error('this handler fails on purpose');
      },
    },
    onError: () => {},
  });

  const oauth = new OAuthClient({ baseUrl, clientId, clientSecret, redirectUri });
  const pending = await oauth.createAuthorizationUrl({ scopes: ['accounts:read', 'posts:read', 'posts:write'] });
  const consent = await fetch(pending.url, { redirect: 'manual' }); // the browser step: the fake approves at once
  await consent.body?.cancel();
  const callback = consent.headers.get('location');
  if (consent.status !== 302 || callback === null) throw new Error(`authorize answered ${consent.status}`);
  const tokens = await oauth.exchangeCode(callback, pending);

  const manager = new TokenManager({ oauth, store: new MemoryTokenStore() });
  await manager.setTokens(tokens);
  const client = new PostSched({ baseUrl, auth: manager });
  const post = await client.posts.create({
    account_ids: ['acc_demo_x'],
    publish_at: atLocalTime('2099-03-30T09:00', 'Europe/Berlin'),
    text: 'hello from the edge',
  });
  return Response.json({
    authorizeUrl: pending.url,
    scopes: tokens.scopes,
    postId: post.id,
    status: post.status,
    resolved: resolved(),
  });
}

async function verify(request) {
  try {
    const event = await verifyWebhookRequest(request, state.secret);
    state.verified.push(event.data.id);
    return new Response(null, { status: 204 });
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    return new Response(error.reason, { status: 400 });
  }
}

/** Where the runtime resolved the package (Deno and Bun); bundles have no import.meta.resolve. */
function resolved() {
  try {
    return ['@postsched/sdk', '@postsched/sdk/webhooks', '@postsched/sdk/schedule'].map((specifier) => import.meta.resolve(specifier));
  } catch {
    return undefined;
  }
}

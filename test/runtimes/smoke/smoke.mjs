// The runtime smoke test: what a user's app does with the installed tarball, in whatever runtime runs this file
// (Node, Bun, Deno). The fake service listens on 127.0.0.1 over node:http; so does the webhook receiver.
// Prints `SMOKE_RESULT {json}` as its last line and exits 0, or throws (exit code 1).
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import {
  APIError, ConflictError, MemoryTokenStore, NotFoundError, OAuthClient, PostSched, PostSchedError, TokenManager, ValidationError,
} from '@postsched/sdk';
import { RedisTokenStore } from '@postsched/sdk/redis';
import { atLocalTime, weeklySlots } from '@postsched/sdk/schedule';
import { createFakeService } from '@postsched/sdk/testing';
import { signWebhook, verifyWebhook, verifyWebhookRequest, WebhookVerificationError } from '@postsched/sdk/webhooks';
import { checkSchedule } from './schedule.mjs';

const started = performance.now();
const require = createRequire(import.meta.url);
const passed = [];
function check(name, ok, detail = '') {
  if (!ok) throw new Error(`${name} failed${detail ? `: ${detail}` : ''}`);
  if (!passed.includes(name)) passed.push(name);
}

const runtime =
  typeof Deno !== 'undefined' ? `deno ${Deno.version.deno}` : typeof Bun !== 'undefined' ? `bun ${Bun.version}` : `node ${process.versions.node}`;
const CLIENT = { clientId: 'app_smoke', clientSecret: 'secret_smoke_0123456789', redirectUri: 'http://127.0.0.1:9/callback' };
const WEBHOOK_SECRET = 'whsec_smoke_0123456789';

// ESM: every entry loads, from the installed tarball (not from a source tree a tsconfig or parent folder points to).
const INSTALLED = '/node_modules/@postsched/sdk/dist/';
const short = (path) => (path.includes(INSTALLED) ? path.slice(path.lastIndexOf(INSTALLED) + INSTALLED.length - 5) : path);
const esmFile = short(import.meta.resolve('@postsched/sdk'));
check(
  'esm',
  typeof PostSched === 'function' && typeof verifyWebhook === 'function' && typeof createFakeService === 'function' &&
    typeof RedisTokenStore === 'function' && typeof atLocalTime === 'function' && esmFile.startsWith('dist/'),
  `@postsched/sdk resolved to ${esmFile}`,
);

const receiver = await startReceiver();
const fake = createFakeService({ apps: [{ ...CLIENT, redirectUris: [CLIENT.redirectUri] }] });
try {
  const { url: baseUrl } = await fake.listen();
  fake.registerWebhookEndpoint({ url: receiver.url, secret: WEBHOOK_SECRET, events: ['post.scheduled'] });

  // OAuth: authorization URL, the browser step (the fake approves and redirects), the code exchange.
  const oauth = new OAuthClient({ baseUrl, ...CLIENT });
  const pending = await oauth.createAuthorizationUrl({ scopes: ['accounts:read', 'posts:read', 'posts:write'] });
  const consent = await fetch(pending.url, { redirect: 'manual' });
  await consent.body?.cancel();
  const callback = consent.headers.get('location');
  check('authorize', consent.status === 302 && callback?.startsWith(CLIENT.redirectUri), `status ${consent.status}`);
  const tokens = await oauth.exchangeCode(callback, pending);
  check('exchange', typeof tokens.accessToken === 'string' && tokens.scopes.includes('posts:write'));

  // A post through the client, with the token manager as its auth.
  const manager = new TokenManager({ oauth, store: new MemoryTokenStore() });
  await manager.setTokens(tokens);
  const client = new PostSched({ baseUrl, auth: manager });
  const post = await client.posts.create({
    account_ids: ['acc_demo_x'],
    publish_at: new Date(fake.clock.now() + 3_600_000),
    text: `hello from ${runtime}`,
  });
  check('post', post.status === 'scheduled' && fake.getPost(post.id)?.text === `hello from ${runtime}`);

  // The Redis entry (Node-only API, node:async_hooks): an encrypted set/get round trip through an ioredis-shaped client.
  const kv = new Map();
  const ioredisLike = {
    async call(command, ...args) {
      if (command === 'SET') {
        kv.set(args[0], args[1]);
        return 'OK';
      }
      if (command === 'GET') return kv.get(args[0]) ?? null;
      // A write of tokens outside the lock: one script (sha, 2 keys: the tokens' and their dead-grant mark's, the value)
      // that sets the tokens and clears the mark.
      if (command === 'EVALSHA' && args[1] === '2' && args.length === 5) {
        kv.set(args[2], args[4]);
        kv.delete(args[3]);
        return 1;
      }
      throw new Error(`smoke: unexpected Redis command ${command}`);
    },
  };
  const store = new RedisTokenStore({ redis: ioredisLike, key: 'postsched:tokens:smoke', encryptionKey: new Uint8Array(32).fill(7) });
  await store.set(tokens);
  const stored = [...kv.values()][0];
  check('redis store', (await store.get())?.accessToken === tokens.accessToken && !stored.includes(tokens.accessToken));

  // Webhooks: the fake's real delivery of post.scheduled, verified by the receiver; a signed Request round trip.
  await fake.flushWebhooks();
  const delivered = receiver.events.find((e) => e.event === 'post.scheduled');
  check('webhook delivery', delivered?.data.id === post.id, receiver.error ?? `got ${JSON.stringify(receiver.events)}`);
  const body = JSON.stringify({ event: 'post.published', created_at: new Date().toISOString(), data: { ...post, status: 'published', published_at: post.publish_at } });
  const signed = new Request('http://127.0.0.1/webhooks', {
    method: 'POST',
    body,
    headers: { 'x-service-signature': await signWebhook({ body, secret: WEBHOOK_SECRET }) },
  });
  check('webhook request', (await verifyWebhookRequest(signed, WEBHOOK_SECRET)).event === 'post.published');

  // Time zones: a post at a wall time in Berlin, and the schedule entry's answers on this runtime's own tz data.
  const scheduleProblems = checkSchedule({ atLocalTime, weeklySlots, ValidationError });
  check('schedule', scheduleProblems.length === 0, scheduleProblems.join('; '));
  const atNine = await client.posts.create({ account_ids: ['acc_demo_x'], publish_at: atLocalTime('2099-03-30T09:00', 'Europe/Berlin') });
  check('schedule post', Date.parse(fake.getPost(atNine.id)?.publish_at) === Date.parse('2099-03-30T07:00:00Z'), JSON.stringify(fake.getPost(atNine.id)));

  // Errors: a 404 is a NotFoundError, an APIError, a PostSchedError and an Error.
  const missing = await client.posts.get('post_missing').then(() => undefined, (error) => error);
  check(
    'instanceof',
    missing instanceof NotFoundError && missing instanceof APIError && missing instanceof PostSchedError && missing instanceof Error &&
      !(missing instanceof ConflictError) && missing.status === 404,
    String(missing),
  );

  // CommonJS: require() of every entry, real work with the CJS build, and instanceof across the two builds.
  const cjs = require('./smoke.cjs');
  const { sdk: cjsSdk, webhooks: cjsWebhooks, schedule: cjsSchedule } = await cjs.runCjs({ baseUrl, accessToken: tokens.accessToken, ...CLIENT });
  const cjsFile = short(cjs.resolved);
  check('cjs', cjsFile.startsWith('dist/') && cjsFile.endsWith('.cjs'), `require('@postsched/sdk') resolved to ${cjsFile}`);
  const fromCjs = new cjsSdk.NotFoundError(404, { error: 'not_found' }, new Headers());
  const badSignature = await cjsWebhooks.verifyWebhook({ body, signature: 't=1,v1=00', secret: WEBHOOK_SECRET }).catch((e) => e);
  check(
    'instanceof across builds',
    fromCjs instanceof NotFoundError && fromCjs instanceof APIError && fromCjs instanceof PostSchedError &&
      !(fromCjs instanceof ConflictError) && missing instanceof cjsSdk.NotFoundError &&
      badSignature instanceof WebhookVerificationError && badSignature instanceof PostSchedError,
  );
  // The CommonJS schedule entry: its own copy of ValidationError, recognized by the ESM main entry's class.
  const cjsProblems = checkSchedule({ ...cjsSchedule, ValidationError });
  check('schedule cjs', cjsProblems.length === 0, cjsProblems.join('; '));
  const separateCopies = cjsSdk.NotFoundError !== NotFoundError;

  console.log(`SMOKE_RESULT ${JSON.stringify({
    runtime,
    esm: esmFile,
    cjs: cjsFile,
    separateCopies,
    server: 'node:http',
    checks: passed,
    ms: Math.round(performance.now() - started),
  })}`);
} finally {
  await fake.close();
  await receiver.close();
}

/** A webhook receiver on 127.0.0.1, as in an Express/node:http app: raw body + the headers object. */
async function startReceiver() {
  const events = [];
  const state = { events, error: undefined };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const raw = new Uint8Array(await new Blob(chunks).arrayBuffer());
        events.push(await verifyWebhook({ body: raw, signature: req.headers, secret: WEBHOOK_SECRET }));
        res.writeHead(204).end();
      } catch (error) {
        state.error = String(error);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  state.url = `http://127.0.0.1:${server.address().port}/webhooks`;
  state.close = () => new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
  return state;
}

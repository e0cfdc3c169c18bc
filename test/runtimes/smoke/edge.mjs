// The edge smoke test's driver, run by Node in the smoke project: starts the fake service (from the installed
// tarball) on 127.0.0.1, starts worker.mjs in one edge runtime, and checks over HTTP what a user's edge app does.
//   node edge.mjs workerd <workerd binary>          worker.workerd.js (bundled), in workerd, loopback-only network
//   node edge.mjs edge-runtime <edge-runtime dir>   worker.edge.js (bundled), in Vercel's edge-runtime VM
//   node edge.mjs workerd <workerd binary> <file>   another bundle in workerd: an ES module worker, or a service
//                                                   worker script when the file name ends in `.sw.js`
//   node edge.mjs deno <deno binary>                worker.mjs, `deno run --conditions=worker`
//   node edge.mjs bun <bun binary>                  worker.mjs, `bun --conditions=worker`
// Prints `SMOKE_RESULT {json}` as its last line and exits 0, or throws (exit code 1).
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createFakeService, signedWebhookDelivery, signWebhook } from '@postsched/sdk/testing';

const [kind, runtimePath, bundle = kind === 'workerd' ? 'worker.workerd.js' : 'worker.edge.js'] = process.argv.slice(2);
const CLIENT = { clientId: 'app_edge', clientSecret: 'secret_edge_0123456789', redirectUri: 'http://127.0.0.1:9/callback' };
const WEBHOOK_SECRET = 'whsec_edge_0123456789';
const passed = [];
function check(name, ok, detail = '') {
  if (!ok) throw new Error(`${name} failed${detail ? `: ${detail}` : ''}`);
  passed.push(name);
}

const fake = createFakeService({ apps: [{ ...CLIENT, redirectUris: [CLIENT.redirectUri] }] });
const { url: baseUrl } = await fake.listen();
const worker = await start(kind, runtimePath);
try {
  const call = async (path, init) => {
    const response = await fetch(`${worker.url}${path}`, init);
    if (response.status === 599) throw new Error(await response.text());
    return response;
  };
  fake.registerWebhookEndpoint({ url: `${worker.url}/verify`, secret: WEBHOOK_SECRET, events: ['post.scheduled'] });
  fake.registerWebhookEndpoint({ url: `${worker.url}/handler`, secret: WEBHOOK_SECRET, events: ['post.scheduled'] });

  // OAuth and a post, all inside the worker: authorize URL (PKCE), the code exchange, posts.create with a TokenManager.
  const run = await (await call('/run', { method: 'POST', body: JSON.stringify({ baseUrl, ...CLIENT, webhookSecret: WEBHOOK_SECRET }) })).json();
  const authorize = new URL(run.authorizeUrl);
  check('authorize url', authorize.searchParams.get('code_challenge_method') === 'S256' && authorize.search.includes('scope=accounts%3Aread+posts%3Aread+posts%3Awrite'), run.authorizeUrl);
  check('exchange', run.scopes?.includes('posts:write'), JSON.stringify(run.scopes));
  check('post', run.status === 'scheduled' && fake.getPost(run.postId)?.text === 'hello from the edge', JSON.stringify(run));
  check('post at a wall time', Date.parse(fake.getPost(run.postId)?.publish_at) === Date.parse('2099-03-30T07:00:00Z'), JSON.stringify(fake.getPost(run.postId)));
  const { problems } = await (await call('/schedule')).json();
  check('schedule', problems.length === 0, problems.join('; '));
  if (run.resolved !== undefined) {
    const files = run.resolved.map((url) => url.slice(url.lastIndexOf('/dist/') + 1));
    check('default entry', files.join() === 'dist/index.js,dist/webhooks/index.js,dist/schedule/index.js', files.join(', '));
    worker.entry = `${files.join(' + ')} (resolved: --conditions=worker)`;
  }

  // The fake's real signed delivery of post.scheduled, to both webhook routes of the worker.
  await fake.flushWebhooks();
  const sent = (route) => fake.deliveries.find((d) => d.url.endsWith(route));
  const events = async () => (await call('/events')).json();
  let seen = await events();
  check('verifyWebhookRequest', sent('/verify')?.status === 204 && seen.verified.includes(run.postId), JSON.stringify(fake.deliveries.map((d) => [d.url, d.status])));
  check('handler', sent('/handler')?.status === 204 && seen.handled.join() === run.postId, JSON.stringify(seen));

  // The same delivery again (a retry): answered 204, not handled twice.
  const replay = sent('/handler');
  const again = await call('/handler', { method: 'POST', headers: replay.headers, body: replay.body });
  seen = await events();
  check('handler duplicate', again.status === 204 && seen.handled.length === 1, `${again.status} ${JSON.stringify(seen)}`);

  // Forged: the same body signed with another secret, to both routes.
  const forgedHeaders = { 'content-type': 'application/json', 'x-service-signature': await signWebhook({ body: replay.body, secret: 'whsec_forged_00' }) };
  for (const route of ['/verify', '/handler']) {
    const forged = await call(route, { method: 'POST', headers: forgedHeaders, body: replay.body });
    check(`${route.slice(1)} forged`, forged.status === 400 && (await forged.text()) === 'no_matching_signature', String(forged.status));
  }

  // A handler that throws: 500, so the service would retry. Any other method: 405.
  const failing = await signedWebhookDelivery('post.failed', { secret: WEBHOOK_SECRET });
  const failed = await call('/handler', { method: 'POST', headers: failing.headers, body: failing.body });
  check('handler failing', failed.status === 500, String(failed.status));
  const get = await call('/handler');
  check('handler 405', get.status === 405 && get.headers.get('allow') === 'POST', String(get.status));

  // examples/webhooks-cloudflare.ts as copied, in the same workerd: the fake's real delivery, a signed
  // post.published it queues (its console line), a forged one.
  if (worker.example !== undefined) {
    const { url, output } = worker.example;
    const real = sent('/handler');
    const relayed = await fetch(url, { method: 'POST', headers: real.headers, body: real.body });
    const published = await signedWebhookDelivery('post.published', { secret: WEBHOOK_SECRET });
    const queued = await fetch(url, { method: 'POST', headers: published.headers, body: published.body });
    const forged = await fetch(url, { method: 'POST', headers: forgedHeaders, body: replay.body });
    const line = `queued post-published {"postId":"${JSON.parse(published.body).data.id}"`;
    const logged = await output(line);
    check(
      'examples/webhooks-cloudflare.ts',
      relayed.status === 204 && queued.status === 204 && forged.status === 400 && logged.includes(line),
      `${relayed.status} ${queued.status} ${forged.status} ${JSON.stringify(logged)}`,
    );
  }

  console.log(`SMOKE_RESULT ${JSON.stringify({ runtime: worker.name, entry: worker.entry, server: 'node:http', checks: passed })}`);
} finally {
  await worker.close();
  await fake.close();
}

/** Starts the worker in `kind`; resolves { name, url, close }. */
async function start(kind, path) {
  if (kind === 'edge-runtime') {
    const { EdgeRuntime, runServer } = createRequire(join(path, 'package.json'))('./dist/index.js');
    const version = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')).version;
    const runtime = new EdgeRuntime({ initialCode: readFileSync(bundle, 'utf8') });
    const server = await runServer({ runtime, port: 0, host: '127.0.0.1' });
    return { name: `edge-runtime ${version}`, url: server.url.replace(/\/$/, ''), close: () => server.close() };
  }
  if (kind === 'workerd') {
    // Outbound fetches go to a network service that allows loopback only ("local"): the fake, and nothing else.
    writeFileSync('workerd.capnp', `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = (
      ${bundle.endsWith('.sw.js') ? `serviceWorkerScript = embed "${bundle}"` : `modules = [(name = "worker.js", esModule = embed "${bundle}")]`},
      compatibilityDate = "2025-09-01",
      globalOutbound = "loopback",
    )),
    (name = "example", worker = (
      modules = [(name = "worker.js", esModule = embed "example.workerd.js")],
      compatibilityDate = "2025-09-01",
      bindings = [(name = "POSTSCHED_WEBHOOK_SECRET", text = "${WEBHOOK_SECRET}")],
    )),
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [
    (name = "http", address = "127.0.0.1:0", http = (), service = "main"),
    (name = "example", address = "127.0.0.1:0", http = (), service = "example"),
  ],
);
`);
    const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
    const child = spawn(path, ['serve', 'workerd.capnp', '--control-fd=3'], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    const ports = {};
    await announced(child, child.stdio[3], (line) => {
      const message = JSON.parse(line);
      if (message.event === 'listen') ports[message.socket] = message.port;
      return ports.http !== undefined && ports.example !== undefined ? ports.http : undefined;
    });
    let logged = '';
    child.stdout.on('data', (data) => (logged += data)); // the workers' console output
    /** The console output once it holds `text` (or after 10 s without it). */
    const output = (text) =>
      new Promise((resolve) => {
        const done = () => {
          if (!logged.includes(text)) return;
          clearTimeout(timer);
          child.stdout.off('data', done);
          resolve(logged);
        };
        const timer = setTimeout(() => resolve(logged), 10_000);
        child.stdout.on('data', done);
        done();
      });
    return {
      name: version,
      url: `http://127.0.0.1:${ports.http}`,
      example: { url: `http://127.0.0.1:${ports.example}/webhooks/postsched`, output },
      close: () => stop(child),
    };
  }
  const argv = kind === 'deno' ? ['run', '-A', '--cached-only', '--conditions=worker', 'serve.mjs'] : ['--conditions=worker', 'serve.mjs'];
  const child = spawn(path, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' } });
  const port = await announced(child, child.stdout, (line) => /^LISTENING (\d+)$/.exec(line)?.[1]);
  const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).split('\n')[0].split(' (')[0].trim();
  return { name: kind === 'bun' ? `bun ${version}` : version, url: `http://127.0.0.1:${port}`, close: () => stop(child) };
}

/** The port a child prints, or its output when it exits first. */
function announced(child, stream, parse) {
  return new Promise((resolve, reject) => {
    let output = '';
    let pending = '';
    child.stderr.on('data', (data) => (output += data));
    stream.on('data', (data) => {
      pending += data;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) {
        output += `${line}\n`;
        const port = parse(line);
        if (port !== undefined) resolve(Number(port));
      }
    });
    child.once('exit', (code) => reject(new Error(`${kind} exited (${code}) before listening:\n${output}`)));
  });
}

function stop(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill();
  });
}

/**
 * The four webhook examples, each run as a user runs it: Express and Hono on real sockets of 127.0.0.1 (Hono
 * through @hono/node-server, as the file serves itself), the Next.js route and the Cloudflare worker called as
 * their platforms call them. Every one gets the same deliveries: good, duplicate, failing (the queue throws),
 * forged, the wrong method, and a server without its secret (it fails where the handler is made).
 */
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { start, stopAll } from '../support/processes.js';
import { ValidationError } from '@postsched/sdk';

const SECRET = 'whsec_example_9d2e';
let postNumber = 0;

/** A post.published body for a new post (examples keep their dedupe memory between tests). */
function publishedBody(): string {
  postNumber += 1;
  return JSON.stringify({
    event: 'post.published',
    created_at: '2024-05-01T12:00:00Z',
    data: { id: `post_${postNumber}`, account_ids: ['acc_1'], published_at: '2024-05-01T12:00:00Z' },
  });
}

/** Signs as the service does (spec §5): HMAC-SHA256 over "<t>.<body>", lowercase hex, t = now. */
function sign(payload: string, secret = SECRET): string {
  const t = Math.floor(Date.now() / 1000);
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex')}`;
}

const delivery = (body: string, signature = sign(body), method = 'POST') =>
  new Request('https://app.example/webhooks/postsched', {
    method,
    ...(method === 'GET' ? {} : { body }),
    headers: { 'content-type': 'application/json', 'x-service-signature': signature },
  });

/** Sends a Request to a server on 127.0.0.1, path and all. */
const over = (base: string) => (request: Request) =>
  fetch(new URL(new URL(request.url).pathname, base), {
    method: request.method,
    headers: request.headers,
    ...(request.method === 'GET' ? {} : { body: request.body, duplex: 'half' }),
  } as RequestInit);

interface Running {
  send(request: Request): Promise<Response>;
  close(): Promise<void>;
}

/** Each example, started with `secret` in its environment (undefined: not configured). */
const examples: { name: string; start(secret: string | undefined): Promise<Running> }[] = [
  {
    name: 'examples/webhooks-express.ts',
    async start(secret) {
      stubSecret(secret);
      const { createApp } = await import('../../examples/webhooks-express.js');
      const server = createApp().listen(0, '127.0.0.1');
      await new Promise<void>((resolve) => server.once('listening', resolve));
      return {
        send: over(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    },
  },
  {
    name: 'examples/webhooks-nextjs.ts',
    async start(secret) {
      stubSecret(secret);
      vi.resetModules(); // the route's handler reads the secret when Next.js loads the file
      const { POST } = await import('../../examples/webhooks-nextjs.js');
      return { send: (request) => POST(request), close: async () => {} };
    },
  },
  {
    name: 'examples/webhooks-hono.ts',
    async start(secret) {
      stubSecret(secret);
      vi.resetModules();
      const { app } = await import('../../examples/webhooks-hono.js');
      const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
        const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
      });
      return {
        send: over(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    },
  },
  {
    name: 'examples/webhooks-cloudflare.ts',
    async start(secret) {
      const { default: worker } = await import('../../examples/webhooks-cloudflare.js');
      return { send: (request) => worker.fetch(request, { POSTSCHED_WEBHOOK_SECRET: secret as string }), close: async () => {} };
    },
  },
];

function stubSecret(secret: string | undefined): void {
  vi.stubEnv('POSTSCHED_WEBHOOK_SECRET', secret);
}

let queued: string[];
beforeEach(() => {
  queued = [];
  vi.spyOn(console, 'info').mockImplementation((line: string) => void queued.push(line));
  vi.spyOn(console, 'warn').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe.each(examples)('$name', ({ start }) => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });
  const run = async (secret: string | null = SECRET) => (running = await start(secret ?? undefined));

  it('answers 204 to a signed delivery, after queueing its event', async () => {
    const { send } = await run();
    const body = publishedBody();
    const response = await send(delivery(body));
    expect(response.status).toBe(204);
    const { id } = JSON.parse(body).data;
    expect(queued).toEqual([`queued post-published {"postId":"${id}","at":"2024-05-01T12:00:00Z"}`]);
  });

  it('queues a delivery sent twice once, and answers 204 both times', async () => {
    const { send } = await run();
    const body = publishedBody();
    expect((await send(delivery(body))).status).toBe(204);
    expect((await send(delivery(body))).status).toBe(204);
    expect(queued).toHaveLength(1);
  });

  it('answers 500 while the queue fails, so the service retries, and queues the retry', async () => {
    const { send } = await run();
    vi.mocked(console.info).mockImplementationOnce(() => {
      throw new Error('queue unavailable');
    });
    const body = publishedBody();
    expect((await send(delivery(body))).status).toBe(500);
    expect(queued).toEqual([]);
    expect((await send(delivery(body))).status).toBe(204);
    expect(queued).toHaveLength(1);
  });

  it('answers 400 with the reason to a forged or tampered delivery and queues nothing', async () => {
    const { send } = await run();
    const body = publishedBody();
    const forged = await send(delivery(body, sign(body, 'whsec_attacker')));
    expect([forged.status, await forged.text()]).toEqual([400, 'no_matching_signature']);
    const tampered = await send(delivery(body.replace('acc_1', 'acc_2'), sign(body)));
    expect([tampered.status, await tampered.text()]).toEqual([400, 'no_matching_signature']);
    const unsigned = await send(delivery(body, ''));
    expect([unsigned.status, await unsigned.text()]).toEqual([400, 'missing_signature']);
    expect(queued).toEqual([]);
  });

  it('answers 405 to a GET', async () => {
    const { send } = await run();
    const response = await send(delivery('', '', 'GET'));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('fails with a ValidationError naming POSTSCHED_WEBHOOK_SECRET when the server has no secret configured, never a 2xx or a 400', async () => {
    // The server (the Worker: its first request, answered 500 by the platform) fails where the handler is made.
    const outcome = await run(null).then(({ send }) => send(delivery(publishedBody()))).then((response) => response.status, (error: unknown) => error);
    expect(outcome).toBeInstanceOf(ValidationError);
    expect(String(outcome)).toMatch(/`secret` is refused by createWebhookHandler\(\): .*POSTSCHED_WEBHOOK_SECRET/);
    expect(String(outcome)).not.toContain(SECRET);
    expect(queued).toEqual([]);
  });
});

describe('examples/webhooks-cloudflare.ts routing', () => {
  it('answers 404 off its path and picks up a rotated secret from env', async () => {
    const { default: worker } = await import('../../examples/webhooks-cloudflare.js');
    const elsewhere = new Request('https://worker.example/other', { method: 'POST' });
    expect((await worker.fetch(elsewhere, { POSTSCHED_WEBHOOK_SECRET: SECRET })).status).toBe(404);
    const body = publishedBody();
    const rotated = 'whsec_rotated_77';
    expect((await worker.fetch(delivery(body, sign(body, rotated)), { POSTSCHED_WEBHOOK_SECRET: rotated })).status).toBe(204);
  });
});

describe('the Express and Hono receivers run directly (npx tsx examples/…)', () => {
  for (const file of ['webhooks-express.ts', 'webhooks-hono.ts']) {
    it(`${file} listens on 127.0.0.1 only, prints that address, and answers a signed delivery there`, async () => {
      const child = start(`examples/${file}`, [], { PORT: '0', POSTSCHED_WEBHOOK_SECRET: SECRET });
      try {
        const [, url] = await child.waitFor(/^Listening on (http:\/\/127\.0\.0\.1:\d+\/webhooks\/postsched)$/m);
        expect(child.output()).not.toContain('localhost');
        const body = publishedBody();
        expect((await over(url as string)(delivery(body))).status).toBe(204);
      } finally {
        await stopAll(child);
      }
    });
  }
});

import { inspect } from 'node:util';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostSched, type Logger } from '@postsched/sdk';
import { redact } from '../../src/core/scrub.js';
import { BASE, FakeTokenProvider, wirePost } from '../helpers.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const EXPIRED = 'tok_EXPIRED_9c2f71d0a4';
const FRESH = 'tok_FRESH_51be8e3f77';

/** A logger capturing every method a console, pino or winston logger has. */
function captureLogger() {
  const lines: string[] = [];
  const sink = (...args: unknown[]) => lines.push(args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 10 }))).join(' '));
  const logger = { debug: sink, info: sink, warn: sink, error: sink, trace: sink, log: sink };
  const typed: Logger = logger;
  void typed;
  return { logger, lines };
}

describe('logger', () => {
  it('never prints a token, across refreshes, retries, errors and uploads', async () => {
    let n = 0;
    server.use(
      http.all(`${BASE}/*`, async ({ request }) => {
        await request.arrayBuffer();
        n++;
        if (request.headers.get('authorization') !== `Bearer ${FRESH}`) return new HttpResponse(null, { status: 401 });
        if (n === 3) return HttpResponse.json({ error: { message: 'busy' } }, { status: 503 });
        if (request.url.endsWith('/nope')) {
          return HttpResponse.json({ error: { code: 'not_found', message: 'No such post' } }, { status: 404 });
        }
        return HttpResponse.json(wirePost(), { status: 200 });
      }),
    );
    const { logger, lines } = captureLogger();
    const client = new PostSched({ baseUrl: BASE, auth: new FakeTokenProvider(EXPIRED, FRESH), logger });
    await client.posts.get('post_1'); // 401, refresh, 200
    await client.posts.get('post_2'); // 503, retry, 200
    const notFound = await client.posts.get('nope').catch((e: unknown) => e);
    await client.media.upload({ file: new Uint8Array([1, 2, 3]), filename: 'a.bin' }).catch(() => undefined);

    expect(lines.length).toBeGreaterThanOrEqual(6);
    const output = [...lines, inspect(client, { depth: 10, showHidden: true }), JSON.stringify(client), inspect(notFound)].join('\n');
    expect(output).not.toContain(EXPIRED);
    expect(output).not.toContain(FRESH);
    expect(output.toLowerCase()).not.toContain('authorization');
  });

  it('writes one line per attempt with method, path, status, duration and retry number', async () => {
    let n = 0;
    server.use(http.get(`${BASE}/posts/post_1`, () => (++n === 1 ? new HttpResponse(null, { status: 503 }) : HttpResponse.json(wirePost()))));
    const { logger, lines } = captureLogger();
    await new PostSched({ baseUrl: BASE, auth: 'tok_x', logger }).posts.get('post_1');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^postsched: GET \/v1\/posts\/post_1 → 503 in \d+ ms \(retry 0\)$/);
    expect(lines[1]).toMatch(/^postsched: GET \/v1\/posts\/post_1 → 200 in \d+ ms \(retry 1\)$/);
  });

  it('redacts credentials from free text', () => {
    expect(redact('Authorization: Bearer abc.def-ghi')).toBe('Authorization: Bearer [redacted]');
    expect(redact('grant_type=refresh_token&refresh_token=r123&client_secret=s456')).toBe(
      'grant_type=refresh_token&refresh_token=[redacted]&client_secret=[redacted]',
    );
    expect(redact('{"access_token":"a1","expires_in":3600}')).toBe('{"access_token":"[redacted]","expires_in":3600}');
  });
});

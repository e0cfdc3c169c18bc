/**
 * A hostile HTTP server on 127.0.0.1 for the network tests (Node-only test code). The first path segment
 * picks the misbehaviour, the second is a tag that keeps one test's counts apart from another's; the rest
 * is the API route (`/accounts`, `/posts`, `/posts/post_1`), answered with a body of the right shape when
 * the misbehaviour lets one through. The server counts every request by method and path so a test can
 * prove that a write never reached it twice, and it knows which answers are still open, so a test can
 * prove that the client gave up on every stalled one.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const CHAOS_MODES = [
  /** The request is read, then the TCP connection is reset: no answer at all. */
  'reset-before-headers',
  /** The request is read and never answered. */
  'stall-before-headers',
  /** Headers and the first bytes of the body, then a reset. */
  'reset-mid-body',
  /** `content-length` promises more than is sent, then a clean close (FIN): a body shorter than announced. */
  'short-body',
  /** Headers, then nothing, forever. */
  'stall-after-headers',
  /** Headers, then one byte of body every 50 ms, never ending: each byte arrives well within any time-out. */
  'slow-drip',
  /** A complete HTTP answer (200, application/json) whose JSON is cut short. */
  'truncated-json',
  /** 200, application/json, no body at all. */
  'empty-body',
  /** A proxy's HTML error page with status 502. */
  'html-502',
  /** 200 with an HTML page instead of JSON. */
  'wrong-content-type',
  /** 200 with a valid 10 MB JSON body (a 10 MB unknown field). */
  'huge-json',
  /** 429 with `Retry-After: 0`, every time. */
  'rate-limit-storm',
  /** 429 with `Retry-After: 1`, every time: a short but real wait between attempts. */
  'rate-limit-wait',
  /** 429 with `Retry-After: 3600`: longer than any client should sit out. */
  'rate-limit-too-long',
  /** 503 on odd requests, success on even ones (per method and path). */
  'flapping-503',
  'ok',
] as const;

export type ChaosMode = (typeof CHAOS_MODES)[number];

export interface ChaosServer {
  /** Base URL for one misbehaviour: `${server.url('flapping-503', 't1')}/posts/post_1`. */
  url(mode: ChaosMode, tag?: string): string;
  /** How many requests reached the server for `METHOD /mode/tag/route`. */
  count(method: string, path: string): number;
  /**
   * How many of them the server may have acted on: all but those answered 429, which tells the client that
   * nothing was done (RFC 6585 §4), so even a POST may be sent again.
   */
  acted(method: string, path: string): number;
  /** Answers started but neither finished nor abandoned by the client (its socket still open). */
  openAnswers(): number;
  close(): Promise<void>;
}

const HUGE_BYTES = 10 * 1024 * 1024;
const ACCOUNT = { id: 'acc_1', platform: 'mastodon', name: 'Chaos' };
const POST = {
  id: 'post_1',
  account_ids: ['acc_1'],
  publish_at: '2030-01-01T00:00:00.000Z',
  status: 'scheduled',
  created_at: '2029-12-01T00:00:00.000Z',
};

/** The success body of an API route, as the wire contract shapes it. */
function successBody(method: string, route: string): { status: number; body: Record<string, unknown> } {
  const [, collection, id] = route.split('/');
  const item = collection === 'accounts' ? ACCOUNT : POST;
  if (id !== undefined) return { status: 200, body: item };
  if (method === 'POST') return { status: 201, body: item };
  return { status: 200, body: { data: [item], next_cursor: null } };
}

export async function startChaosServer(): Promise<ChaosServer> {
  const counts = new Map<string, number>();
  const actedOn = new Map<string, number>();
  const sockets = new Set<Socket>();
  const open = new Set<ServerResponse>();
  const flap = new Map<string, number>();

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const key = `${req.method} ${path}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    open.add(res);
    const forget = () => open.delete(res);
    res.on('finish', forget);
    res.on('close', forget);
    // Drain the request body first, so a reset is about the answer, not an unread upload.
    req.resume();
    req.on('end', () => {
      const [, mode, , ...route] = path.split('/');
      if (!mode?.startsWith('rate-limit-')) actedOn.set(key, (actedOn.get(key) ?? 0) + 1);
      answer(mode as ChaosMode, key, `/${route.join('/')}`, req, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function answer(mode: ChaosMode, key: string, route: string, req: IncomingMessage, res: ServerResponse): void {
    const method = req.method ?? 'GET';
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_chaos', ...headers });
      res.end(JSON.stringify(body));
    };
    const success = successBody(method, route);
    const rateLimited = (retryAfter: string) =>
      json(429, { error: { code: 'rate_limited', message: 'slow down' } }, { 'retry-after': retryAfter });
    switch (mode) {
      case 'reset-before-headers':
        req.socket.resetAndDestroy();
        return;
      case 'stall-before-headers':
        return; // the client's time-out must end the call
      case 'reset-mid-body': {
        const body = JSON.stringify(success.body);
        res.writeHead(success.status, { 'content-type': 'application/json', 'content-length': String(body.length) });
        res.write(body.slice(0, 10), () => setTimeout(() => req.socket.resetAndDestroy(), 5));
        return;
      }
      case 'short-body': {
        const body = JSON.stringify(success.body);
        res.writeHead(success.status, { 'content-type': 'application/json', 'content-length': String(body.length * 2) });
        res.write(body, () => req.socket.end()); // FIN, not RST: the client sees a clean close too early
        return;
      }
      case 'stall-after-headers':
        res.writeHead(success.status, { 'content-type': 'application/json' });
        res.flushHeaders(); // and never a body
        return;
      case 'slow-drip': {
        res.writeHead(success.status, { 'content-type': 'application/json' });
        res.write('{');
        // Whitespace is valid JSON padding: the body is well-formed so far, it just never ends.
        const drip = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(drip));
        return;
      }
      case 'truncated-json':
        res.writeHead(success.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(success.body).slice(0, 25));
        return;
      case 'empty-body':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '0' });
        res.end();
        return;
      case 'html-502':
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>');
        return;
      case 'wrong-content-type':
        res.writeHead(success.status, { 'content-type': 'text/html' });
        res.end('<html>not json</html>');
        return;
      case 'huge-json':
        json(success.status, { ...success.body, padding: 'x'.repeat(HUGE_BYTES) });
        return;
      case 'rate-limit-storm':
        rateLimited('0');
        return;
      case 'rate-limit-wait':
        rateLimited('1');
        return;
      case 'rate-limit-too-long':
        rateLimited('3600');
        return;
      case 'flapping-503': {
        const n = (flap.get(key) ?? 0) + 1;
        flap.set(key, n);
        if (n % 2 === 1) json(503, { error: { code: 'unavailable', message: 'try again' } });
        else json(success.status, success.body);
        return;
      }
      default:
        json(success.status, success.body);
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (mode, tag = 'default') => `http://127.0.0.1:${port}/${mode}/${tag}`,
    count: (method, path) => counts.get(`${method} ${path}`) ?? 0,
    acted: (method, path) => actedOn.get(`${method} ${path}`) ?? 0,
    openAnswers: () => [...open].filter((res) => !res.socket?.destroyed).length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

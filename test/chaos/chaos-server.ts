/**
 * A hostile HTTP server on 127.0.0.1 for the network tests (Node-only test code). The first path segment
 * picks the misbehaviour; the server counts every request by method and path so a test can prove that a
 * write never reached it twice.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ChaosMode =
  | 'reset-before-headers'
  | 'reset-mid-body'
  | 'stall-after-headers'
  | 'truncated-json'
  | 'html-502'
  | 'wrong-content-type'
  | 'huge-json'
  | 'rate-limit-storm'
  | 'flapping-503'
  | 'ok';

export interface ChaosServer {
  /** Base URL for one misbehaviour: `${server.url('flapping-503')}/posts/p_1`. */
  url(mode: ChaosMode): string;
  /** How many requests reached the server for `METHOD /mode/rest`. */
  count(method: string, path: string): number;
  close(): Promise<void>;
}

const POST = { id: 'post_1', account_ids: ['acc_1'], publish_at: '2030-01-01T00:00:00.000Z', status: 'scheduled' };

export async function startChaosServer(): Promise<ChaosServer> {
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const flap = new Map<string, number>();

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const key = `${req.method} ${path}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    // Drain the request body first, so a reset is about the answer, not an unread upload.
    req.resume();
    req.on('end', () => answer(path.split('/')[1] as ChaosMode, key, req, res));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function answer(mode: ChaosMode, key: string, req: IncomingMessage, res: ServerResponse): void {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_chaos', ...headers });
      res.end(JSON.stringify(body));
    };
    switch (mode) {
      case 'reset-before-headers':
        req.socket.resetAndDestroy();
        return;
      case 'reset-mid-body': {
        const body = JSON.stringify(POST);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length * 4) });
        res.write(body.slice(0, 10), () => setTimeout(() => req.socket.resetAndDestroy(), 5));
        return;
      }
      case 'stall-after-headers':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders(); // and never a body: the client's time-out must end the call
        return;
      case 'truncated-json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id":"post_1","account_ids":["acc');
        return;
      case 'html-502':
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
        return;
      case 'wrong-content-type':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>not json</html>');
        return;
      case 'huge-json':
        json(200, { ...POST, text: 'x'.repeat(10 * 1024 * 1024) });
        return;
      case 'rate-limit-storm':
        json(429, { error: { code: 'rate_limited', message: 'slow down' } }, { 'retry-after': '0' });
        return;
      case 'flapping-503': {
        const n = (flap.get(key) ?? 0) + 1;
        flap.set(key, n);
        if (n % 2 === 1) json(503, { error: { code: 'unavailable', message: 'try again' } });
        else json(req.method === 'POST' ? 201 : 200, POST);
        return;
      }
      default:
        json(200, POST);
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (mode) => `http://127.0.0.1:${port}/${mode}`,
    count: (method, path) => counts.get(`${method} ${path}`) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

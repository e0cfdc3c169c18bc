/** A webhook receiver for tests: in-process (a fetch function) or a real server on 127.0.0.1. */
import { createServer, type Server } from 'node:http';
import type { Mode } from './helpers.js';

export interface Received {
  headers: Record<string, string>;
  body: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers for the next calls, in order: a status, or 'hang' (never answers). Then 200. */
  script: (number | 'hang')[];
  /** For handler mode: the fetch the fake delivers with. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  close(): Promise<void>;
}

export async function startReceiver(mode: Mode, name = 'receiver'): Promise<Receiver> {
  const receiver: Receiver = { url: `http://${name}.test/hooks`, received: [], script: [], close: async () => {} };
  if (mode === 'handler') {
    receiver.fetch = async (_input, init) => {
      receiver.received.push({ headers: Object.fromEntries(new Headers(init.headers)), body: String(init.body) });
      const next = receiver.script.shift() ?? 200;
      if (next === 'hang') {
        return new Promise<Response>((_resolve, reject) =>
          init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
        );
      }
      return new Response(null, { status: next });
    };
    return receiver;
  }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      receiver.received.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
      const next = receiver.script.shift() ?? 200;
      if (next === 'hang') return; // never answers; closed with the server
      res.writeHead(next).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  receiver.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}

/**
 * A throw-away HTTP server on 127.0.0.1 for the hostile-server tests: each test gives the handler, and the
 * server counts what it sent and whether the client dropped the connection.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface HostileServer {
  readonly url: string;
  /** Requests received, as `METHOD /path`. */
  readonly requests: string[];
  close(): Promise<void>;
}

export async function startServer(handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<HostileServer> {
  const sockets = new Set<Socket>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    Promise.resolve(handler(req, res)).catch((error: unknown) => {
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Writes `chunk` again and again until `limit` bytes are out or the client goes away; resolves with the bytes
 * written and whether the client closed the connection first. Respects back-pressure, so it never buffers.
 */
export function streamBody(res: ServerResponse, chunk: Uint8Array, limit = Number.POSITIVE_INFINITY): Promise<{ written: number; clientClosed: boolean }> {
  return new Promise((resolve) => {
    let written = 0;
    let clientClosed = false;
    res.on('close', () => {
      clientClosed = !res.writableFinished;
      resolve({ written, clientClosed });
    });
    const pump = () => {
      while (written < limit) {
        if (res.destroyed) return;
        written += chunk.byteLength;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
  });
}

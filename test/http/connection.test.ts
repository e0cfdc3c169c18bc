import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConnectionError, PostSched } from '@postsched/sdk';

/** A 127.0.0.1 port that was just closed: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('connection failures', () => {
  it('re-sends a POST when the connection was refused (nothing left), then throws ConnectionError', async () => {
    const port = await closedPort();
    let attempts = 0;
    const client = new PostSched({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      auth: 'tok_conn_3e9a',
      fetch: (input, init) => {
        attempts++;
        return fetch(input, init);
      },
    });
    const error = await client.posts.create({ account_ids: ['acc_1'], publish_at: '2030-01-01T00:00:00Z' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(attempts).toBe(3);
    expect((error as ConnectionError).message).toContain('ECONNREFUSED');
    expect((error as ConnectionError).message).toContain(`127.0.0.1:${port}`);
    // The cause keeps the code, and nothing of the request.
    const cause = (error as ConnectionError).cause as Error & { cause?: { code?: string } };
    expect(JSON.stringify({ m: cause.message, c: cause.cause?.code })).toContain('ECONNREFUSED');
    expect(JSON.stringify(error)).not.toContain('tok_conn_3e9a');
  });
});

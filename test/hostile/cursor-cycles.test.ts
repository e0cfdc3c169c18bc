/**
 * Issue 12 item 13: a service whose cursors go round in a cycle (A, B, A, B …) paged forever (9,028 requests in
 * 5 s). The list now stops with a ResponseValidationError naming `next_cursor`, within about twice the cycle.
 */
import { describe, expect, it } from 'vitest';
import { PostSched, ResponseValidationError } from '@postsched/sdk';

function cycling(cycle: string[], tail: string[] = []) {
  const requests: Array<string | null> = [];
  const client = new PostSched({
    baseUrl: 'https://api.example',
    auth: 'tok_1',
    fetch: async (request) => {
      const cursor = new URL(request.url).searchParams.get('cursor');
      requests.push(cursor);
      const position = requests.length - 1;
      const next = position < tail.length ? tail[position] : cycle[(position - tail.length) % cycle.length];
      return Response.json({ data: [{ id: `post_${position}`, account_ids: ['acc_1'] }], next_cursor: next });
    },
  });
  return { client, requests };
}

describe('cursors that go round in a cycle', () => {
  it('A, B, A, B …: ResponseValidationError after a few pages, not an endless walk', async () => {
    const { client, requests } = cycling(['A', 'B']);
    const error = await client.posts.list().toArray().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).path).toEqual(['next_cursor']);
    expect(requests.length).toBeLessThanOrEqual(4);
  });

  it('the same cursor again is caught at once', async () => {
    const { client, requests } = cycling(['A']);
    await expect(client.posts.list().toArray()).rejects.toBeInstanceOf(ResponseValidationError);
    expect(requests).toEqual([null, 'A']);
  });

  it('a cycle of 50 after a tail of 30 distinct cursors is caught within about twice its length', async () => {
    const cycle = Array.from({ length: 50 }, (_, i) => `c${i}`);
    const tail = Array.from({ length: 30 }, (_, i) => `t${i}`);
    const { client, requests } = cycling(cycle, tail);
    await expect(client.accounts.list().toArray()).rejects.toBeInstanceOf(ResponseValidationError);
    expect(requests.length).toBeLessThan(30 + 3 * 50);
  });

  it('a long list of distinct cursors is walked to its end', async () => {
    let n = 0;
    const client = new PostSched({
      baseUrl: 'https://api.example',
      auth: 'tok_1',
      fetch: async () => {
        n++;
        return Response.json({ data: [{ id: `acc_${n}` }], next_cursor: n < 2_000 ? `cursor_${n}` : null });
      },
    });
    expect(await client.accounts.list().toArray()).toHaveLength(2_000);
  });
});

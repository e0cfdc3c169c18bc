import { afterEach, describe, expect, it, vi } from 'vitest';
import { PostSched } from '@postsched/sdk';
import { JSON_HEADERS, recordingClient, wirePost } from '../helpers.js';

/**
 * The per-call work of a plain GET (bench/RESULTS.md, latency and throughput): no Response tee, one request
 * sent. Counted, not timed. (How often ky copies a Request for its retries is ky's own business, not asserted.)
 */
describe('the hot path of a GET', () => {
  afterEach(() => vi.restoreAllMocks());

  it('reads the answer without cloning the Response, and the body stays readable on withResponse()', async () => {
    const responseClone = vi.spyOn(Response.prototype, 'clone');
    const client = new PostSched({
      baseUrl: 'http://127.0.0.1:1',
      auth: 'tok_1',
      fetch: async () => new Response(`\uFEFF${JSON.stringify(wirePost({ text: 'Grüße 👋' }))}`, { headers: JSON_HEADERS }),
    });
    const { data, response } = await client.posts.get('post_1').withResponse();
    expect(responseClone).not.toHaveBeenCalled();
    // Decoded like Response.text(): UTF-8, byte order mark dropped.
    expect(data.text).toBe('Grüße 👋');
    expect(JSON.parse((await response.text()).replace(/^\uFEFF/, ''))).toMatchObject({ id: 'post_1' });
  });

  it('sends a GET once, with the token on the request fetch gets', async () => {
    const { client, seen } = recordingClient(() => Response.json(wirePost(), { headers: JSON_HEADERS }));
    await client.posts.get('post_1');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers.get('authorization')).toBe('Bearer tok_1');
  });
});

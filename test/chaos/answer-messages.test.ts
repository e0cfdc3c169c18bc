/** What a user reads when the answer is not the service's JSON: a short message, and the raw body on the error. */
import { describe, expect, it } from 'vitest';
import { InternalServerError, PostSched, ResponseValidationError } from '@postsched/sdk';

const PAGE = '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>';

function answering(status: number, body: string, contentType: string): PostSched {
  return new PostSched({
    baseUrl: 'https://api.postsched.test/v1',
    auth: 'tok_messages',
    maxRetries: 0,
    fetch: async () => new Response(body, { status, headers: { 'content-type': contentType, 'x-request-id': 'req_msg' } }),
  });
}

describe('answers that are not the service JSON', () => {
  it("says a proxy's HTML error page is an HTML page instead of quoting its markup, and keeps the page on error.body", async () => {
    const error = (await answering(502, PAGE, 'text/html').posts.get('post_1').catch((e: unknown) => e)) as InternalServerError;
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.message).toBe(
      "502 Bad Gateway: the answer is an HTML page, not the service's JSON (a proxy or gateway may have answered); it is on `error.body` (request req_msg)",
    );
    expect(error.message).not.toContain('<');
    expect(error.body).toBe(PAGE);
  });

  it('still quotes a plain-text error body', async () => {
    const error = (await answering(503, 'upstream connect error', 'text/plain').posts.get('post_1').catch((e: unknown) => e)) as Error;
    expect(error.message).toBe('503 Service Unavailable: upstream connect error (request req_msg)');
  });
});

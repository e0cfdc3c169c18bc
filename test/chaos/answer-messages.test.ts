/** What a user reads when the answer is not the service's JSON: a short message, and the raw body on the error. */
import { describe, expect, it } from 'vitest';
import { ConnectionError, InternalServerError, PostSched, ResponseValidationError } from '@postsched/sdk';

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

describe('success answers that are not JSON', () => {
  it('names the content type of a body that is not JSON, and keeps the raw text on error.body', async () => {
    const error = (await answering(200, '<html>not json</html>', 'text/html; charset=utf-8').posts.get('post_1').catch((e: unknown) => e)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message).toBe('GET /posts/post_1 answered 200 with a body that is not JSON (content-type text/html); the raw text is on `error.body`.');
    expect(error.body).toBe('<html>not json</html>');
  });

  it('says that a write answered with a cut-off JSON body was acted on', async () => {
    const cut = '{"id":"post_1","account_i';
    const error = (await answering(201, cut, 'application/json')
      .posts.create({ account_ids: ['acc_1'], publish_at: '2030-01-01T00:00:00Z' })
      .catch((e: unknown) => e)) as ResponseValidationError;
    expect(error.message).toBe(
      'POST /posts answered 201 with a body that is not JSON (content-type application/json); the raw text is on `error.body`. ' +
        'The status says the service acted on the request.',
    );
    expect(error.body).toBe(cut);
  });

  it('says that a write whose answer broke off mid-body reached the service, not that it could not be reached', async () => {
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"id":"post_1",'));
        controller.error(new TypeError('terminated'));
      },
    });
    const client = new PostSched({ baseUrl: 'https://api.postsched.test/v1', auth: 'tok_messages', maxRetries: 0, fetch: async () => new Response(body, { status: 201 }) });
    const error = (await client.posts.create({ account_ids: ['acc_1'], publish_at: '2030-01-01T00:00:00Z' }).catch((e: unknown) => e)) as ConnectionError;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toMatch(/^POST \/posts: answered 201, then its body broke off: .+\. The service may have acted on it: the call had no idempotencyKey/);
    expect(error.message).not.toContain('Could not reach');
  });
});

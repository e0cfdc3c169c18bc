import { inspect } from 'node:util';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  PostSched,
  RateLimitError,
  ResponseValidationError,
  UnprocessableEntityError,
} from '@postsched/sdk';
import { BASE } from '../helpers.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const TOKEN = 'tok_errors_7b1e4d';
const client = () => new PostSched({ baseUrl: BASE, auth: TOKEN, maxRetries: 0 });

function failWith(status: number, body: string | Record<string, unknown> | null, headers: Record<string, string> = {}) {
  server.use(
    http.all(`${BASE}/*`, () =>
      typeof body === 'string'
        ? new HttpResponse(body, { status, headers: { 'content-type': 'text/html', 'x-request-id': 'req_err', ...headers } })
        : HttpResponse.json(body, { status, headers: { 'x-request-id': 'req_err', ...headers } }),
    ),
  );
}

describe('errors', () => {
  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [422, UnprocessableEntityError],
    [429, RateLimitError],
    [500, InternalServerError],
    [502, InternalServerError],
    [503, InternalServerError],
    [418, APIError],
  ])('turns a %i answer into %o with status, body, headers and request id', async (status, ErrorClass) => {
    const body = { error: { code: 'some_code', message: 'what went wrong', field: 'publish_at' } };
    failWith(status, body);
    const error = await client().posts.get('post_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toBeInstanceOf(APIError);
    const apiError = error as APIError;
    expect(apiError.status).toBe(status);
    expect(apiError.body).toEqual(body);
    expect(apiError.requestId).toBe('req_err');
    expect(apiError.headers.get('x-request-id')).toBe('req_err');
    expect(apiError.message).toContain('what went wrong');
    expect(apiError.message).toContain('req_err');
  });

  it('names the missing scope of a 403 insufficient_scope', async () => {
    failWith(403, { error: { code: 'insufficient_scope', message: 'Missing scope' } }, {
      'www-authenticate': 'Bearer error="insufficient_scope", scope="posts:write"',
    });
    const error = (await client().posts.delete('post_1').catch((e: unknown) => e)) as PermissionDeniedError;
    expect(error.missingScope).toBe('posts:write');
    expect(error.message).toContain('posts:write');
  });

  it('keeps a non-JSON error body as text', async () => {
    failWith(502, '<html>Bad gateway</html>');
    const error = (await client().posts.get('post_1').catch((e: unknown) => e)) as InternalServerError;
    expect(error.body).toBe('<html>Bad gateway</html>');
  });

  it('never carries the request headers or the token in an error, its message, JSON or inspect output', async () => {
    failWith(404, { error: { code: 'not_found', message: 'No such post' } });
    const error = (await client().posts.get('post_1').catch((e: unknown) => e)) as NotFoundError;
    expect(error.headers.has('authorization')).toBe(false);
    for (const text of [error.message, JSON.stringify(error), inspect(error, { depth: 10, showHidden: true }), String(error.stack)]) {
      expect(text).not.toContain(TOKEN);
      expect(text.toLowerCase()).not.toContain('bearer');
    }
  });

  it('keeps a "__proto__" field of an answer as a field of error.body, never as its prototype', async () => {
    const text = '{"__proto__":{"message":"forged","polluted":true},"code":"x"}';
    server.use(http.all(`${BASE}/*`, () => new HttpResponse(text, { status: 404, headers: { 'content-type': 'application/json' } })));
    const error = (await client().posts.get('post_1').catch((e: unknown) => e)) as NotFoundError;
    expect(Object.getPrototypeOf(error.body)).toBe(Object.prototype);
    expect((error.body as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(error.body)).toBe(text);
    expect(error.message).not.toContain('forged');
    // A 2xx answer the SDK cannot use keeps it too.
    server.use(http.all(`${BASE}/*`, () => new HttpResponse(text, { status: 200, headers: { 'content-type': 'application/json' } })));
    const invalid = (await client().posts.get('post_1').catch((e: unknown) => e)) as ResponseValidationError;
    expect(JSON.stringify(invalid.body)).toBe(text);
  });

  it('raises ResponseValidationError when a success answer is not JSON', async () => {
    server.use(http.get(`${BASE}/posts/post_1`, () => new HttpResponse('<html>ok</html>', { status: 200 })));
    const error = (await client().posts.get('post_1').catch((e: unknown) => e)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.body).toBe('<html>ok</html>');
  });
});

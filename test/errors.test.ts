import { describe, expect, it } from 'vitest';
import {
  APIError,
  ConflictError,
  ERROR_ID,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  PostSchedError,
  RateLimitError,
  makeAPIError,
} from '@postsched/sdk';

/** Builds the class chain a second copy of the SDK (the other build format, or a second bundle) would have. */
function foreignCopy() {
  class Base extends Error {
    static readonly [ERROR_ID]: string = 'PostSchedError';
  }
  class Api extends Base {
    static override readonly [ERROR_ID]: string = 'APIError';
  }
  class NotFound extends Api {
    static override readonly [ERROR_ID]: string = 'NotFoundError';
  }
  class Unbranded extends Error {}
  return { NotFound, Unbranded };
}

describe('errors', () => {
  it('instanceof matches an error thrown by another copy of the SDK, by class id', () => {
    const { NotFound, Unbranded } = foreignCopy();
    const foreign = new NotFound('gone');
    expect(foreign instanceof NotFoundError).toBe(true);
    expect(foreign instanceof APIError).toBe(true);
    expect(foreign instanceof PostSchedError).toBe(true);
    expect(foreign instanceof ConflictError).toBe(false);
    expect(new Unbranded('x') instanceof PostSchedError).toBe(false);
    expect((null as unknown) instanceof PostSchedError).toBe(false);
  });

  it('picks the error class from the status and names it', () => {
    const headers = new Headers({ 'x-request-id': 'req_42' });
    const notFound = makeAPIError(404, { error: { message: 'post p_1 does not exist' } }, headers);
    expect(notFound).toBeInstanceOf(NotFoundError);
    expect(notFound.name).toBe('NotFoundError');
    expect(notFound.message).toBe('404 Not Found: post p_1 does not exist (request req_42)');
    expect(notFound.requestId).toBe('req_42');
    expect(makeAPIError(503, '<html>', headers)).toBeInstanceOf(InternalServerError);
    expect(makeAPIError(418, null, headers).constructor).toBe(APIError);
  });

  it('names the missing scope of a 403 insufficient_scope answer', () => {
    const headers = new Headers({ 'www-authenticate': 'Bearer error="insufficient_scope", scope="posts:write"' });
    const error = makeAPIError(403, null, headers);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect((error as PermissionDeniedError).missingScope).toBe('posts:write');
    expect(error.message).toContain('posts:write');
  });

  it('carries the wait of a 429 answer', () => {
    const error = makeAPIError(429, null, new Headers(), { retryAfterMs: 120_000 });
    expect((error as RateLimitError).retryAfterMs).toBe(120_000);
    expect(error.message).toContain('120 s');
  });
});

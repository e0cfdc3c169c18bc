import { describe, expect, it, vi } from 'vitest';
import {
  APIError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  PostSchedError,
  RateLimitError,
  TimeoutError,
  ValidationError,
} from '@postsched/sdk';
import { makeAPIError } from '../src/core/status-error.js';

/** A second copy of the SDK (the other build format beside this one, or a second bundle): the modules loaded afresh. */
async function foreignCopy(): Promise<typeof import('@postsched/sdk')> {
  vi.resetModules();
  return import('@postsched/sdk');
}

describe('errors', () => {
  it('instanceof matches an error thrown by another copy of the SDK, by class id', async () => {
    const other = await foreignCopy();
    expect(other.NotFoundError).not.toBe(NotFoundError); // really another copy
    const foreign = new other.NotFoundError(404, 'gone', new Headers());
    expect(foreign instanceof NotFoundError).toBe(true);
    expect(foreign instanceof APIError).toBe(true);
    expect(foreign instanceof PostSchedError).toBe(true);
    expect(foreign instanceof ConflictError).toBe(false);
    expect(new other.ValidationError('bad') instanceof ValidationError).toBe(true);
    expect(new other.ValidationError('bad') instanceof TimeoutError).toBe(false);
    // And the other way round.
    expect(new NotFoundError(404, 'gone', new Headers()) instanceof other.APIError).toBe(true);
    class Unbranded extends Error {}
    expect(new Unbranded('x') instanceof PostSchedError).toBe(false);
    expect((null as unknown) instanceof PostSchedError).toBe(false);
    expect(('NotFoundError' as unknown) instanceof NotFoundError).toBe(false);
  });

  it("names an error by its class even when minified, and keeps an app's own subclass apart", () => {
    expect(new ValidationError('bad').name).toBe('ValidationError');
    class StoreDown extends PostSchedError {}
    const error = new StoreDown('down');
    expect(error.name).toBe('StoreDown');
    expect(error).toBeInstanceOf(StoreDown);
    expect(error).toBeInstanceOf(PostSchedError);
    expect(error).not.toBeInstanceOf(ValidationError);
    expect(new ValidationError('bad')).not.toBeInstanceOf(StoreDown);
    expect(JSON.stringify(new ValidationError('bad', ['x']))).toBe('{"path":["x"]}');
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

import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PostSched, ValidationError } from '@postsched/sdk';

describe('new PostSched()', () => {
  it.each([
    [{ baseUrl: 'not a url', auth: 't' }, ['baseUrl']],
    [{ baseUrl: 'ftp://x.test', auth: 't' }, ['baseUrl']],
    [{ baseUrl: 'https://user:pw@x.test', auth: 't' }, ['baseUrl']],
    [{ baseUrl: 'http://api.x.test', auth: 't' }, ['baseUrl']],
    [{ baseUrl: 'https://x.test', auth: 't', timeoutMs: 0 }, ['timeoutMs']],
    [{ baseUrl: 'https://x.test', auth: 't', maxRetries: -1 }, ['maxRetries']],
    [{ baseUrl: 'https://x.test', auth: 't', maxRetryAfterMs: 1.5 }, ['maxRetryAfterMs']],
    [{ baseUrl: 'https://x.test', auth: 't', fetch: 'https://proxy.example' }, ['fetch']],
  ])('rejects %j with a ValidationError at %j', (options, path) => {
    let error: unknown;
    try {
      new PostSched(options as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(path);
  });

  it('sends bearer tokens over plain http only to loopback hosts', () => {
    for (const baseUrl of ['http://localhost:8080', 'http://127.0.0.1:9/v1', 'http://[::1]:3000']) {
      expect(() => new PostSched({ baseUrl, auth: 't' })).not.toThrow();
    }
    expect(() => new PostSched({ baseUrl: 'http://api.x.test', auth: 't' })).toThrow(/must use https/);
  });

  it('shows only its base URL in inspect and JSON, never the auth it holds', () => {
    const secret = 'tok_inspect_d41d8c';
    const client = new PostSched({ baseUrl: 'https://x.test/v1', auth: secret });
    const provider = { refreshToken: secret, getAccessToken: async () => secret, forceRefresh: async () => secret };
    const managed = new PostSched({ baseUrl: 'https://x.test/v1', auth: provider });
    for (const c of [client, managed]) {
      const text = [inspect(c, { depth: 10, showHidden: true }), JSON.stringify(c), inspect(c.posts, { showHidden: true })].join('\n');
      expect(text).toContain('https://x.test/v1');
      expect(text).not.toContain(secret);
    }
    expect(inspect(client)).toBe("PostSched { baseUrl: 'https://x.test/v1' }");
  });
});

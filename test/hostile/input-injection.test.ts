/**
 * Issue 12 item 12: CR/LF in a header value or an idempotency key, and a lone surrogate in an id, are refused
 * before anything is sent with a ValidationError naming the option — never a raw TypeError/URIError quoting the
 * value, which may be a secret.
 */
import { describe, expect, it } from 'vitest';
import { PostSched, ValidationError } from '@postsched/sdk';

const SECRET_VALUE = 'key_secret_value_1\r\nX-Injected: 1';

function client(sent: Request[] = []): PostSched {
  return new PostSched({
    baseUrl: 'https://api.example',
    auth: 'tok_1',
    maxRetries: 0,
    fetch: async (request) => {
      sent.push(request);
      return Response.json({ id: 'post_1', account_ids: ['acc_1'] });
    },
  });
}

async function failure(promise: Promise<unknown>): Promise<ValidationError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ValidationError);
  expect((error as Error).message).not.toContain('key_secret_value_1');
  return error as ValidationError;
}

describe('values that would inject headers or break a URL', () => {
  it('an idempotencyKey with CR/LF: ValidationError naming idempotencyKey, nothing sent', async () => {
    const sent: Request[] = [];
    const error = await failure(
      client(sent).posts.create({ account_ids: ['acc_1'], publish_at: new Date(Date.now() + 86_400_000) }, { idempotencyKey: SECRET_VALUE }),
    );
    expect(error.path).toEqual(['idempotencyKey']);
    expect(error.message).toContain('`idempotencyKey`');
    expect(sent).toHaveLength(0);
  });

  it('an empty idempotencyKey is refused (a write would be retried as if it were safe)', async () => {
    const error = await failure(client().posts.create({ account_ids: ['acc_1'], publish_at: new Date(Date.now() + 86_400_000) }, { idempotencyKey: '' }));
    expect(error.path).toEqual(['idempotencyKey']);
  });

  it('a per-call header with CR/LF: ValidationError naming headers and the header, not the value', async () => {
    const sent: Request[] = [];
    const error = await failure(client(sent).posts.get('post_1', { headers: { 'x-api-key': SECRET_VALUE } }));
    expect(error.path).toEqual(['headers']);
    expect(error.message).toContain('x-api-key');
    expect(sent).toHaveLength(0);
  });

  it('a client header with CR/LF: the constructor throws a ValidationError naming headers', () => {
    let error: unknown;
    try {
      new PostSched({ baseUrl: 'https://api.example', auth: 't', headers: [['x-api-key', SECRET_VALUE]] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).not.toContain('key_secret_value_1');
    expect((error as Error).message).toContain('x-api-key');
  });

  // Encoded, they would reach the service as %0D%0A: a server or proxy that decodes the path before logging or routing
  // on it gets a line break from the SDK. No id holds one.
  it.each(['post_1\r\nX-Injected: 1', 'post_1\n', 'post\u0000_1', 'post_1\u007f', 'post\t1'])('an id with a control character (%j): ValidationError naming the id, nothing sent', async (id) => {
    const sent: Request[] = [];
    const sdk = client(sent);
    for (const [call, name] of [[() => sdk.posts.get(id), 'id'], [() => sdk.posts.delete(id), 'id'], [() => sdk.accounts.get(id), 'id'], [() => sdk.analytics.getPost(id), 'postId']] as const) {
      const error = await failure(call());
      expect(error.path).toEqual([name]);
      expect(error.message).not.toContain('X-Injected');
    }
    expect(sent).toHaveLength(0);
  });

  it('an id with a lone surrogate: ValidationError naming the id, not a URIError', async () => {
    const error = await failure(client().posts.get('post_\uD800'));
    expect(error.path).toEqual(['id']);
    const analytics = await failure(client().analytics.getPost('post_\uDC00x'));
    expect(analytics.path).toEqual(['postId']);
  });
});

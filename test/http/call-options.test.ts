/**
 * One option check (issue 22): every numeric option has the same bounds and the same `ValidationError` whether it is
 * given to the client or to one call, and a call refuses by name an option it does not take (it used to ignore it).
 */
import { describe, expect, it } from 'vitest';
import { PostSched, ValidationError } from '@postsched/sdk';

const POST = { id: 'post_1', account_ids: ['acc_1'] };

function client() {
  let sent = 0;
  const sdk = new PostSched({ baseUrl: 'https://api.example', auth: 'tok_1', fetch: async () => (sent++, Response.json(POST)) });
  return { sdk, sent: () => sent };
}

async function refusal(call: Promise<unknown>): Promise<ValidationError> {
  const error = await call.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ValidationError);
  return error as ValidationError;
}

describe('numeric options: the same bounds and error on the client and on a call', () => {
  it.each([
    ['timeoutMs', 3e9],
    ['timeoutMs', 0],
    ['timeoutMs', 1.5],
    ['timeoutMs', Number.NaN],
    ['timeoutMs', '100'],
    ['maxRetries', 11],
    ['maxRetries', -1],
    ['maxRetries', Number.POSITIVE_INFINITY],
  ])('%s: %s', async (name, value) => {
    const atClient = await refusal(Promise.resolve().then(() => new PostSched({ baseUrl: 'https://api.example', auth: 't', [name]: value })));
    const { sdk, sent } = client();
    const perCall = await refusal(sdk.posts.get('post_1', { [name]: value }));
    expect(perCall.message).toBe(atClient.message);
    expect(perCall.path).toEqual([name]);
    expect(perCall.message).toMatch(new RegExp(`^\`${name}\` must be an integer from \\d+ to \\d+`));
    expect(sent()).toBe(0);
  });

  it('takes a value at the bounds, per call as on the client', async () => {
    const { sdk, sent } = client();
    await sdk.posts.get('post_1', { timeoutMs: 2_147_483_647, maxRetries: 10 });
    await sdk.posts.get('post_1', { timeoutMs: 1, maxRetries: 0 });
    expect(sent()).toBe(2);
  });
});

describe('options a call does not take', () => {
  it.each([
    [{ baseUrl: 'https://elsewhere.example' }, 'baseUrl', /client option/],
    [{ fetch: async () => Response.json(POST) }, 'fetch', /client option/],
    [{ prefixUrl: 'https://elsewhere.example' }, 'prefixUrl', /not an option of this call/],
    [{ idempotencyKey: 'k_1' }, 'idempotencyKey', /not an option of this call/],
    [{ timeout: 5 }, 'timeout', /not an option of this call/],
  ])('refuses %j on a GET, naming it', async (options, name, message) => {
    const { sdk, sent } = client();
    const error = await refusal(sdk.posts.get('post_1', options as never));
    expect(error.path).toEqual([name]);
    expect(error.message).toMatch(new RegExp(`^\`${name}\``));
    expect(error.message).toMatch(message);
    expect(sent()).toBe(0);
  });

  it('refuses them on writes, lists, raw calls and uploads too', async () => {
    const { sdk, sent } = client();
    const publish_at = new Date(Date.now() + 86_400_000);
    await refusal(sdk.posts.create({ account_ids: ['acc_1'], publish_at }, { baseUrl: 'x' } as never));
    await refusal(sdk.posts.list({}, { fetch: () => undefined } as never).toArray());
    await refusal(sdk.get('/things', { prefixUrl: 'x' } as never));
    await refusal(sdk.get('/things', { body: { a: 1 } } as never));
    await refusal(sdk.media.upload({ file: new Uint8Array([1]) }, { baseUrl: 'x' } as never));
    expect(sent()).toBe(0);
  });

  it('takes an option left undefined, and refuses options that are not an object', async () => {
    const { sdk, sent } = client();
    await sdk.posts.get('post_1', { baseUrl: undefined } as never);
    expect(sent()).toBe(1);
    const error = await refusal(sdk.posts.get('post_1', 'fast' as never));
    expect(error.path).toEqual(['options']);
  });
});

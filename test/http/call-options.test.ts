/**
 * One option check (issue 22): every numeric option has the same bounds and the same `ValidationError` whether it is
 * given to the client or to one call, and a call refuses by name an option it does not take (it used to ignore it).
 * The headers a client and a call give all reach the request.
 */
import { describe, expect, it } from 'vitest';
import { OAuthClient, PostSched, ValidationError } from '@postsched/sdk';
import { createWebhookHandler, verifyWebhook, verifyWebhookRequest } from '@postsched/sdk/webhooks';

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

  it('refuses null options with a ValidationError on every kind of call, a rejection and never a TypeError', async () => {
    const { sdk, sent } = client();
    const calls: Array<() => PromiseLike<unknown>> = [
      () => sdk.posts.get('post_1', null as never),
      () => sdk.posts.create({ account_ids: ['acc_1'], publish_at: new Date(Date.now() + 86_400_000) }, null as never),
      () => sdk.posts.list({}, null as never).toArray(),
      () => sdk.get('/things', null as never),
      () => sdk.post('/things', null as never),
      () => sdk.media.upload({ file: new Uint8Array([1]) }, null as never),
    ];
    for (const call of calls) {
      const error = await refusal(Promise.resolve().then(call));
      expect(error.path).toEqual(['options']);
    }
    // A method that returns a promise rejects it: nothing is thrown at the call.
    expect(() => void sdk.media.upload({ file: new Uint8Array([1]) }, null as never).then(undefined, () => undefined)).not.toThrow();
    expect(() => sdk.paginate('/things', null as never)).toThrow(ValidationError);
    expect(sent()).toBe(0);
  });

  it.each([['a string', 'abort'], ['a plain object', { aborted: false }], ['a number', 1]])('refuses a signal that is %s, naming it', async (_what, signal) => {
    const { sdk, sent } = client();
    const error = await refusal(sdk.posts.get('post_1', { signal: signal as never }));
    expect(error.path).toEqual(['signal']);
    expect(error.message).toMatch(/^`signal` must be an AbortSignal/);
    await refusal(sdk.media.upload({ file: new Uint8Array([1]) }, { signal: signal as never }));
    expect(sent()).toBe(0);
  });

  it('refuses an onProgress that is not a function (it would be ignored in silence)', async () => {
    const { sdk, sent } = client();
    const error = await refusal(sdk.media.upload({ file: new Uint8Array([1]) }, { onProgress: 'bar' as never }));
    expect(error.path).toEqual(['onProgress']);
    expect(sent()).toBe(0);
  });

  it.each([
    ['a BigInt', { count: 1n }],
    ['a cycle', (() => {
      const node: Record<string, unknown> = {};
      node['self'] = node;
      return node;
    })()],
  ])('refuses a JSON body holding %s with a ValidationError naming the option, nothing sent', async (_what, value) => {
    const { sdk, sent } = client();
    const publish_at = new Date(Date.now() + 86_400_000);
    const extra = await refusal(sdk.posts.create({ account_ids: ['acc_1'], publish_at }, { extraBody: { field: value } }));
    expect(extra.path).toEqual(['extraBody']);
    expect(extra.message).toMatch(/^`extraBody` cannot be sent as JSON/);
    const raw = await refusal(sdk.post('/things', { body: value }));
    expect(raw.path).toEqual(['body']);
    expect(raw.message).toMatch(/^`body` cannot be sent as JSON/);
    expect(sent()).toBe(0);
  });
});

describe('the other numeric options go through the same check', () => {
  it.each([
    ['OAuthClient timeoutMs', () => new OAuthClient({ baseUrl: 'https://api.example', clientId: 'c', clientSecret: 's', redirectUri: 'https://app.example/cb', timeoutMs: 3e9 }), 'timeoutMs'],
    ['paginate pageSize', () => client().sdk.paginate('/things', { pageSize: 101 }), 'pageSize'],
    ['createWebhookHandler maxBodyBytes', () => createWebhookHandler({ secret: 'whsec_1', on: {}, maxBodyBytes: -1 }), 'maxBodyBytes'],
  ])('%s', (_what, make, name) => {
    const error = (() => {
      try {
        make();
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual([name]);
    expect((error as Error).message).toMatch(new RegExp(`^\`${name}\` must be an integer from \\d+ to \\d+`));
  });

  it('verifyWebhook refuses a toleranceSeconds and verifyWebhookRequest a maxBodyBytes that is not a whole number', async () => {
    const body = '{}';
    const tolerance = await verifyWebhook({ body, signature: 't=1,v1=' + '0'.repeat(64), secret: 'whsec_1', toleranceSeconds: Number.NaN }).catch((e: unknown) => e);
    const request = new Request('https://app.example/hooks', { method: 'POST', body, headers: { 'x-service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` } });
    const limit = await verifyWebhookRequest(request, 'whsec_1', { maxBodyBytes: 1.5 }).catch((e: unknown) => e);
    for (const [error, name] of [[tolerance, 'toleranceSeconds'], [limit, 'maxBodyBytes']] as const) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).path).toEqual([name]);
    }
  });
});

describe('headers a client and a call give', () => {
  it('are all sent, the call’s winning, a value that reads "undefined" too (ky alone would drop it)', async () => {
    const seen: Request[] = [];
    const fetch = async (input: RequestInfo | URL) => (seen.push(input as Request), Response.json(POST));
    const sdk = new PostSched({ baseUrl: 'https://api.example', auth: 'tok_1', headers: { 'x-client': 'undefined', 'x-both': 'client' }, fetch });
    await sdk.posts.get('post_1', { headers: { 'x-call': 'undefined', 'x-both': 'call' } });
    await sdk.posts.get('post_1');
    const [withOwn, plain] = seen.map((request) => Object.fromEntries(request.headers));
    expect(withOwn).toMatchObject({ 'x-client': 'undefined', 'x-call': 'undefined', 'x-both': 'call', accept: 'application/json', authorization: 'Bearer tok_1' });
    expect(plain).toMatchObject({ 'x-client': 'undefined', 'x-both': 'client', accept: 'application/json', authorization: 'Bearer tok_1' });
    expect(plain).not.toHaveProperty('x-call');
  });
});

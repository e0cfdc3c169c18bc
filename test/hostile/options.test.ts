/**
 * Options objects as a user may get them wrong (issue 27, section 4): a misspelt option is refused by name with the
 * closest one, not ignored; an option set on Object.prototype is not an option; a Proxy or getter that throws is a
 * ValidationError that repeats nothing of what it threw. Constructors, factories and per-call options alike.
 */
import { describe, expect, it } from 'vitest';
import { OAuthClient, PostSched, TokenManager, UserClients, ValidationError } from '@postsched/sdk';
import { RedisTokenStore, RedisWebhookDedupe } from '@postsched/sdk/redis';
import { PostgresTokenStore } from '@postsched/sdk/postgres';
import { createFakeService } from '@postsched/sdk/testing';
import { createWebhookHandler } from '@postsched/sdk/webhooks';
import { TEST_KEY } from '../support/token-key.js';

const oauth = () => new OAuthClient({ baseUrl: 'https://api.example', clientId: 'c', clientSecret: 'cs_SECRET', redirectUri: 'https://app.example/cb' });
const client = { baseUrl: 'https://api.example', auth: 'tok_SECRET' };

/** Every public constructor and factory that takes an options object: its name, options it accepts, and a call. */
const constructors: Array<[string, object, (options: never) => unknown]> = [
  ['new PostSched()', client, (options) => new PostSched(options)],
  ['new UserClients()', { oauth: oauth(), baseUrl: 'https://api.example' }, (options) => new UserClients(options)],
  ['new TokenManager()', { oauth: oauth() }, (options) => new TokenManager(options)],
  ['new OAuthClient()', { baseUrl: 'https://api.example', clientId: 'c', clientSecret: 'cs_SECRET', redirectUri: 'https://app.example/cb' }, (options) => new OAuthClient(options)],
  ['new RedisTokenStore()', { redis: { call: async () => null }, key: 'k', encryptionKey: TEST_KEY }, (options) => new RedisTokenStore(options)],
  ['new RedisWebhookDedupe()', { redis: { call: async () => null } }, (options) => new RedisWebhookDedupe(options)],
  ['new PostgresTokenStore()', { pool: { query: async () => ({ rows: [] }) }, key: 'k', encryptionKey: TEST_KEY }, (options) => new PostgresTokenStore(options)],
  ['createWebhookHandler()', { secret: 'whsec_SECRET', on: {} }, (options) => createWebhookHandler(options)],
  ['createFakeService()', {}, (options) => createFakeService(options)],
];

function refusal(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('a misspelt option is refused by name, with the closest one', () => {
  it.each<[string, () => unknown, string, string | undefined]>([
    ['new UserClients({ maxUser })', () => new UserClients({ oauth: oauth(), baseUrl: 'https://api.example', maxUser: 5 } as never), 'maxUser', 'maxUsers'],
    ['new PostSched({ timeoutMS })', () => new PostSched({ ...client, timeoutMS: 5 } as never), 'timeoutMS', 'timeoutMs'],
    ['new TokenManager({ refreshMargin })', () => new TokenManager({ oauth: oauth(), refreshMargin: 5 } as never), 'refreshMargin', 'refreshMarginMs'],
    ['new OAuthClient({ scope })', () => new OAuthClient({ baseUrl: 'https://api.example', clientId: 'c', clientSecret: 's', redirectUri: 'https://app.example/cb', scope: 'x' } as never), 'scope', undefined],
    ['new RedisTokenStore({ lockTTLMs })', () => new RedisTokenStore({ redis: {} as never, key: 'k', lockTTLMs: 5 } as never), 'lockTTLMs', 'lockTtlMs'],
    ['new RedisWebhookDedupe({ prefx })', () => new RedisWebhookDedupe({ redis: {} as never, prefx: 'p' } as never), 'prefx', 'prefix'],
    ['createWebhookHandler({ tolerance })', () => createWebhookHandler({ secret: 'whsec_x', on: {}, tolerance: 5 } as never), 'tolerance', undefined],
    ['createWebhookHandler({ handlerTimeout })', () => createWebhookHandler({ secret: 'whsec_x', on: {}, handlerTimeout: 5 } as never), 'handlerTimeout', 'handlerTimeoutMs'],
    ['createFakeService({ profil })', () => createFakeService({ profil: 'minimal' } as never), 'profil', 'profile'],
    ['withOptions({ maxRetry })', () => new PostSched(client).withOptions({ maxRetry: 1 } as never), 'maxRetry', 'maxRetries'],
    ['UserClients clientOptions', () => new UserClients({ oauth: oauth(), baseUrl: 'https://api.example', clientOptions: { timeout: 5 } } as never), 'timeout', 'timeoutMs'],
    ['UserClients managerOptions', () => new UserClients({ oauth: oauth(), baseUrl: 'https://api.example', managerOptions: { storeTimeout: 5 } } as never), 'storeTimeout', 'storeTimeoutMs'],
  ])('%s', (_name, run, option, suggestion) => {
    const error = refusal(run);
    expect(error.message).toMatch(new RegExp(`^\`${option}\` is not an option of \\S+`));
    expect(error.message).toContain('(it takes ');
    if (suggestion === undefined) expect(error.message).not.toContain('Did you mean');
    else expect(error.message).toContain(`Did you mean \`${suggestion}\`?`);
    expect(error.path).toEqual([option]);
  });

  it('names the option that is not one, never its value', () => {
    const error = refusal(() => new OAuthClient({ baseUrl: 'https://api.example', clientId: 'c', clientSecret: 's', redirectUri: 'https://app.example/cb', client_secret: 'cs_SECRET' } as never));
    expect(error.message).toMatch(/^`client_secret` is not an option of new OAuthClient\(\) \(it takes baseUrl, clientId, clientSecret, redirectUri, issuer, fetch, timeoutMs, revocationEndpoint\)\. Did you mean `clientSecret`\?$/);
    const forged = refusal(() => new PostSched({ ...client, 'x\ny': 1 } as never));
    expect(forged.message).toMatch(/^`"x\\ny"` is not an option/);
  });

  it('takes an option whose value is undefined, as if it were left out', () => {
    for (const [, good, make] of constructors) expect(() => make({ ...good, unknownButUndefined: undefined } as never)).not.toThrow();
  });
});

describe('options that throw when read: a ValidationError that repeats nothing of what was thrown', () => {
  const proxy = () => new Proxy({}, { ownKeys: () => { throw new Error('trap tok_SECRET'); } });
  const getter = () => Object.defineProperty({}, 'timeoutMs', { enumerable: true, get: () => { throw new Error('getter tok_SECRET'); } });

  it.each(constructors)('%s', (of, _good, make) => {
    for (const hostile of [proxy(), getter()]) {
      const error = refusal(() => make(hostile as never));
      expect(error.message).toBe(`\`options\` of ${of} could not be read (a getter or Proxy threw): pass a plain object.`);
      expect(error.message).not.toContain('SECRET');
    }
  });

  it('per call: the call fails with that ValidationError and sends nothing', async () => {
    let sent = 0;
    const sdk = new PostSched({ ...client, fetch: async () => (sent++, Response.json({ id: 'p', account_ids: [] })) });
    for (const hostile of [proxy(), getter()]) {
      const error = await sdk.posts.get('p', hostile as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toBe('`options` of this call could not be read (a getter or Proxy threw): pass a plain object.');
      expect(await sdk.get('/things', hostile as never).catch((e: unknown) => e)).toBeInstanceOf(ValidationError);
    }
    expect(sent).toBe(0);
  });
});

describe('an option set on Object.prototype is not an option', () => {
  const proto = Object.prototype as Record<string, unknown>;
  const polluted = ['timeoutMs', 'maxRetries', 'refreshMarginMs', 'maxUsers', 'maxBodyBytes', 'lockTtlMs', 'doneTtlMs', 'profile', 'issuer', 'idempotencyKey', 'extraQuery'];

  function withPollution<T>(run: () => T): T {
    // Values every check refuses: read from the prototype, they would make each constructor or call throw.
    for (const name of polluted) proto[name] = name === 'extraQuery' ? { polluted: '1' } : name === 'idempotencyKey' ? 'polluted' : -1;
    try {
      return run();
    } finally {
      for (const name of polluted) delete proto[name];
    }
  }

  it.each(constructors)('%s reads its own options only', (_of, good, make) => {
    withPollution(() => expect(() => make({ ...good } as never)).not.toThrow());
  });

  it('a call reads its own options only: no time-out, retry count, idempotency key or query from the prototype', async () => {
    const requests: Request[] = [];
    const sdk = new PostSched({ ...client, fetch: async (request) => (requests.push(request), Response.json({ id: 'p', account_ids: [] })) });
    await withPollution(async () => {
      await sdk.posts.get('p');
      await sdk.posts.get('p', {});
      await sdk.post('/things', { body: {} });
      await sdk.posts.create({ account_ids: ['a'], publish_at: new Date(Date.now() + 864e5) });
    });
    expect(requests).toHaveLength(4);
    for (const request of requests) {
      expect(request.url).not.toContain('polluted');
      expect(request.headers.get('idempotency-key')).toBeNull();
    }
  });
});

describe('OAuthClient per call: own properties only', () => {
  it('an Object.prototype.state set by other code never becomes the CSRF state; a misspelt option is refused', async () => {
    const proto = Object.prototype as Record<string, unknown>;
    let request: { state: string } | undefined;
    try {
      proto.state = 'fixed_by_someone_else';
      request = await oauth().createAuthorizationUrl({ scopes: ['posts:read'] });
    } finally {
      delete proto.state;
    }
    expect(request?.state).not.toBe('fixed_by_someone_else');
    expect(request?.state).toMatch(/^[\w-]{43}$/);
    const error = await oauth().createAuthorizationUrl({ scopes: ['posts:read'], State: 'x' } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/^`State` is not an option of createAuthorizationUrl\(\) \(it takes scopes, state\)\. Did you mean `state`\?$/);
  });
});

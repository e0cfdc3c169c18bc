import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TokenManager, type TokenSet, ValidationError } from '@postsched/sdk';
import { createClient } from 'redis';
import { RedisTokenStore, SharedTokenStoreError } from '@postsched/sdk/redis';
import { CLIENT_KINDS, type TestClient } from './redis-clients.js';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { TEST_KEY } from '../support/token-key.js';

const KEY_A = Buffer.alloc(32, 7);
const KEY_B = Buffer.alloc(32, 9).toString('base64');

function tokens(label: string): TokenSet {
  return {
    accessToken: `at-${label}-secret-access`,
    refreshToken: `rt-${label}-secret-refresh`,
    expiresAt: 1_900_000_000_000,
    scopes: ['posts:read', 'posts:write'],
    tokenType: 'bearer',
  };
}

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
// `?.`: when the set-up failed, its own error is the one to see, not a knock-on one from the clean-up.
afterAll(async () => {
  await server?.stop();
});

describe.each(CLIENT_KINDS)('RedisTokenStore with $name', (kind) => {
  let conn: TestClient;
  let key: string;
  beforeEach(async () => {
    conn = await kind.connect(server.url);
    key = `postsched:test:${crypto.randomUUID()}`;
  });
  afterEach(async () => {
    await conn?.close();
  });


  it('returns undefined before any tokens are stored, then the stored tokens', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key });
    expect(await store.get()).toBeUndefined();
    await store.set(tokens('one'));
    expect(await store.get()).toEqual(tokens('one'));
    await store.set(tokens('two'));
    expect(await store.get()).toEqual(tokens('two'));
  });

  it('shares the tokens between stores on different connections (as between processes)', async () => {
    const other = await kind.connect(server.url);
    try {
      await new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key }).set(tokens('shared'));
      expect(await new RedisTokenStore({ encryptionKey: TEST_KEY, redis: other.client, key }).get()).toEqual(tokens('shared'));
    } finally {
      await other.close();
    }
  });

  it('hands out and keeps copies: mutating what get() returned or set() was given changes nothing stored', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key });
    const given = tokens('one');
    await store.set(given);
    given.accessToken = 'changed after set';
    given.scopes.push('changed');
    expect(await store.get()).toEqual(tokens('one'));
    const got = (await store.get()) as TokenSet;
    got.accessToken = 'changed after get';
    delete got.refreshToken;
    got.scopes.length = 0;
    expect(await store.get()).toEqual(tokens('one'));
    // The compare-and-set still decides from what Redis holds.
    await expect(store.set(tokens('two'), { expectedRefreshToken: tokens('one').refreshToken })).resolves.toBe(true);
    expect(await store.get()).toEqual(tokens('two'));
  });

  it('a TokenManager keeps refreshing after the app mutates the TokenSet getTokens() gave it', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key });
    await store.set({ ...tokens('one'), expiresAt: Date.now() + 3_600_000 });
    const manager = new TokenManager({ oauth: { refresh: async () => ({ ...tokens('two'), expiresAt: Date.now() + 3_600_000 }) }, store });
    expect(await manager.getAccessToken()).toBe(tokens('one').accessToken);
    const shown = (await manager.getTokens()) as TokenSet;
    delete shown.refreshToken; // e.g. before showing the tokens to the user
    shown.accessToken = 'hidden';
    expect(manager.peekAccessToken()).toBe(tokens('one').accessToken);
    await expect(manager.forceRefresh(tokens('one').accessToken)).resolves.toBe(tokens('two').accessToken);
  });

  it('keeps fields it does not know through a round trip', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key });
    const withExtra = { ...tokens('x'), idToken: 'kept' } as TokenSet;
    await store.set(withExtra);
    expect(await store.get()).toEqual(withExtra);
  });

  it('refuses to store something that is not a token set, and writes nothing', async () => {
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key });
    const bad = { ...tokens('x'), expiresAt: 'tomorrow' } as unknown as TokenSet;
    const error = await store.set(bad).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain('expiresAt');
    expect((error as Error).message).not.toContain('secret');
    expect(await conn.raw('EXISTS', key)).toBe(0);
  });

  it('reports a stored value that is not a token set as unreadable, naming the problem', async () => {
    const store = new RedisTokenStore({ encryptionKey: 'none', redis: conn.client, key });
    await conn.raw('SET', key, 'not json');
    await expect(store.get()).rejects.toMatchObject({ name: 'SharedTokenStoreError', code: 'unreadable', problem: 'malformed' });
    await conn.raw('SET', key, JSON.stringify({ accessToken: 'at-secret' }));
    const error = await store.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SharedTokenStoreError);
    expect(error).toMatchObject({ code: 'unreadable' });
    expect((error as Error).message).toContain('expiresAt');
    expect((error as Error).message).not.toContain('at-secret');
  });

  describe('with an encryptionKey', () => {
    it('stores ciphertext that holds none of the tokens, and reads them back', async () => {
      const store = new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_A });
      await store.set(tokens('enc'));
      const raw = String(await conn.raw('GET', key));
      expect(raw.startsWith('enc:v1:')).toBe(true);
      for (const secret of ['at-enc', 'rt-enc', 'secret', 'accessToken', 'posts:read']) expect(raw).not.toContain(secret);
      expect(await store.get()).toEqual(tokens('enc'));
    });

    it('uses a fresh IV for every write', async () => {
      const store = new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_A });
      await store.set(tokens('same'));
      const first = await conn.raw('GET', key);
      await store.set(tokens('same'));
      expect(await conn.raw('GET', key)).not.toEqual(first);
    });

    it('accepts the key as base64 text', async () => {
      const writer = new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_B });
      await writer.set(tokens('b64'));
      const reader = new RedisTokenStore({ redis: conn.client, key, encryptionKey: Buffer.from(KEY_B, 'base64') });
      expect(await reader.get()).toEqual(tokens('b64'));
    });

    it('fails as unreadable, not garbage, when read with the wrong key', async () => {
      await new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_A }).set(tokens('wk'));
      const wrong = new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_B });
      const error = await wrong.get().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SharedTokenStoreError);
      expect(error).toMatchObject({ code: 'unreadable', problem: 'wrong_key_or_tampered', key });
      expect(inspect(error, { depth: 5 })).not.toContain('secret');
    });

    it('fails when the ciphertext is copied under another key (the key name is bound in)', async () => {
      await new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_A }).set(tokens('moved'));
      const otherKey = `${key}:victim`;
      await conn.raw('SET', otherKey, String(await conn.raw('GET', key)));
      const victim = new RedisTokenStore({ redis: conn.client, key: otherKey, encryptionKey: KEY_A });
      await expect(victim.get()).rejects.toMatchObject({ problem: 'wrong_key_or_tampered' });
    });

    it('fails when a single byte of the ciphertext changed', async () => {
      await new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_A }).set(tokens('t'));
      const raw = String(await conn.raw('GET', key));
      const flipped = raw.slice(0, -2) + (raw.at(-2) === 'A' ? 'B' : 'A') + raw.slice(-1);
      await conn.raw('SET', key, flipped);
      const store = new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_A });
      await expect(store.get()).rejects.toMatchObject({ problem: 'wrong_key_or_tampered' });
    });

    it('tells a store without the key that the value is encrypted, and a store with one that it is not', async () => {
      await new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_A }).set(tokens('m'));
      await expect(new RedisTokenStore({ encryptionKey: 'none', redis: conn.client, key }).get()).rejects.toMatchObject({ problem: 'missing_key' });
      await new RedisTokenStore({ encryptionKey: 'none', redis: conn.client, key }).set(tokens('clear'));
      const error = await new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_A }).get().catch((e: unknown) => e);
      expect(error).toMatchObject({ problem: 'not_encrypted' });
      // Why, and how to fix it: the keyring's word for a move from 'none' to a key.
      expect((error as Error).message).toContain('`allowPlaintext: true`');
      expect((error as Error).message).toContain('postsched rekey');
    });
  });

  it('shows neither the encryption key nor the client in inspect or JSON output', () => {
    const store = new RedisTokenStore({ redis: conn.client, key, encryptionKey: KEY_B });
    for (const shown of [inspect(store, { showHidden: true, depth: 10 }), JSON.stringify(store)]) {
      expect(shown).toContain(key);
      expect(shown).not.toContain(KEY_B);
      expect(shown).not.toContain('127.0.0.1');
    }
  });
});

describe('RedisTokenStore options', () => {
  const redis = { call: async () => null };

  it.each([
    ['31 bytes', Buffer.alloc(31, 1), 'got 31 bytes'],
    ['a short base64 string', Buffer.alloc(16, 1).toString('base64'), 'decodes to 16 bytes'],
    ['text that is not base64', 'correct horse battery staple!!', 'not base64'],
    ['a number', 42, 'got a number'],
    ['a Float32Array', new Float32Array(8), 'must be a Uint8Array (or Buffer) of 32 bytes or its base64 text, or a keyring { current, keys }; got a Float32Array'],
    ['an ArrayBuffer', new ArrayBuffer(32), 'got an ArrayBuffer'],
    ['an array of numbers', Array.from({ length: 32 }, () => 1), 'got an Array'],
    ['an empty string', '', 'is an empty string (an environment variable set to nothing?)'],
  ])('rejects an encryptionKey that is %s, saying how to make one and never echoing it', (_, encryptionKey, says) => {
    const error = (() => {
      try {
        new RedisTokenStore({ redis, key: 'k', encryptionKey: encryptionKey as string });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(['encryptionKey']);
    expect((error as Error).message).toContain(says);
    expect((error as Error).message).toContain('openssl rand -base64 32');
    if (typeof encryptionKey === 'string' && encryptionKey !== '') expect((error as Error).message).not.toContain(encryptionKey);
  });

  it('refuses to start without a key: undefined (an unset variable) names the likely cause and the command that makes a key', () => {
    const env: Record<string, string | undefined> = {};
    const error = (() => {
      try {
        new RedisTokenStore({ redis, key: 'k', encryptionKey: env['TOKEN_ENCRYPTION_KEY'] });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(['encryptionKey']);
    expect((error as Error).message).toMatch(/^`encryptionKey` is undefined: .*unset environment variable .*TOKEN_ENCRYPTION_KEY/);
    expect((error as Error).message).toContain('openssl rand -base64 32');
    expect((error as Error).message).toContain("`encryptionKey: 'none'`");
    // Missing altogether (JavaScript, or a cast) is the same refusal; the explicit word keeps tokens in clear.
    expect(() => new RedisTokenStore({ redis, key: 'k' } as never)).toThrow(/`encryptionKey` is undefined/);
    expect(new RedisTokenStore({ redis, key: 'k', encryptionKey: 'none' }).toJSON()).toEqual({ key: 'k', encrypted: false });
  });

  it('rejects a client that is neither ioredis nor node-redis', () => {
    expect(() => new RedisTokenStore({ encryptionKey: TEST_KEY, redis: {} as never, key: 'k' })).toThrow(/ioredis client .* node-redis client/);
  });

  it('fails saying so, never reading "no tokens", with a node-redis client in legacy mode (callbacks, no promise)', async () => {
    const client = await createClient({ url: server.url }).on('error', () => {}).connect();
    try {
      const key = `postsched:test:${crypto.randomUUID()}`;
      await new RedisTokenStore({ encryptionKey: TEST_KEY, redis: client, key }).set(tokens('a'));
      // node-redis 4's `legacyMode: true` (which connect-redis 6 asked for) or 5's `.legacy()`: sendCommand returns nothing.
      const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: client.legacy() as never, key });
      const error = await store.get().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SharedTokenStoreError);
      expect(error).toMatchObject({ code: 'unavailable' });
      expect(String((error as Error).cause)).toMatch(/no promise.*legacy/);
    } finally {
      client.destroy();
    }
  });

  it('takes a cluster client (node-redis createCluster, ioredis Cluster) only with a hash tag in the key', () => {
    const nodeRedisCluster = { sendCommand: async () => null, masters: [], slots: [] };
    const ioredisCluster = { call: async () => null, isCluster: true };
    for (const redis of [nodeRedisCluster, ioredisCluster]) {
      expect(() => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: 'tokens:user_42' })).toThrow(/no hash tag.*"tokens:\{user_42\}"/);
      expect(() => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: 'tokens:{}' })).toThrow(ValidationError); // an empty tag hashes the whole key
      expect(new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: 'tokens:{user_42}' }).key).toBe('tokens:{user_42}');
    }
  });

  it('routes every command of a node-redis cluster by the key it names, to the master', async () => {
    const routed: Array<[string | undefined, boolean | undefined, string]> = [];
    const redis = {
      masters: [],
      sendCommand: async (firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]) => {
        routed.push([firstKey, isReadonly, args[0]!]);
        return args[0] === 'SET' ? 'OK' : args[0] === 'GET' ? null : 1;
      },
    };
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: 'tokens:{u1}' });
    await store.lock(async () => store.set(tokens('c'), { expectedRefreshToken: 'rt-x' }));
    expect(routed).toEqual([
      ['tokens:{u1}:lock', false, 'EVALSHA'], // the take, with the note of the lease's holder (`…:lock:holder`, same slot)
      ['tokens:{u1}', false, 'GET'],
      ['tokens:{u1}', false, 'EVALSHA'],
      ['tokens:{u1}:lock', false, 'EVALSHA'],
    ]);
  });

  it('rejects an empty key and non-integer time options', () => {
    expect(() => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: '' })).toThrow(ValidationError);
    expect(() => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: 'k', lockTtlMs: 0 })).toThrow(/lockTtlMs/);
    expect(() => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: 'k', commandTimeoutMs: 1.5 })).toThrow(/commandTimeoutMs/);
  });

  // Past setTimeout's ceiling a timer fires at once: every command would time out, every lock be given up.
  it.each(['lockTtlMs', 'lockWaitMs', 'commandTimeoutMs'])('refuses a %s past setTimeout\'s ceiling (2^31 - 1 ms) with a ValidationError', (name) => {
    expect(() => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: 'k', [name]: 2 ** 31 })).toThrow(ValidationError);
    expect(() => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: 'k', [name]: 2 ** 31 })).toThrow(new RegExp(`\`${name}\` must be an integer from \\d+ to 2147483647`));
    expect(() => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: 'k', [name]: 2 ** 31 - 1 })).not.toThrow();
  });
});

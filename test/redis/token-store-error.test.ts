/**
 * Every store failure is a `TokenStoreError` (issue 22): an app that catches `TokenStoreError` around
 * `getAccessToken()` catches a Redis outage too, with the store's own class and `operation` kept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TokenManager, TokenStoreError, type TokenSet } from '@postsched/sdk';
import {
  LockLostError,
  LockTimeoutError,
  RedisTokenStore,
  RedisTokenStoreError,
  StoredTokensUnreadableError,
  TokenStoreUnavailableError,
} from '@postsched/sdk/redis';
import { CLIENT_KINDS, type TestClient } from './redis-clients.js';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { TEST_KEY } from '../support/token-key.js';

const EXPIRED: TokenSet = { accessToken: 'at_old_0123456789', refreshToken: 'rt_0123456789', expiresAt: 0, scopes: [], tokenType: 'bearer' };

describe.each(CLIENT_KINDS)('a Redis outage seen through TokenManager ($name)', (kind) => {
  let server: RedisServer | undefined;
  let conn: TestClient | undefined;
  afterEach(async () => {
    await conn?.close();
    await server?.stop();
  });

  it('rejects getAccessToken() with a TokenStoreError (the TokenStoreUnavailableError of the failed command)', async () => {
    server = await startRedisServer();
    conn = await kind.connect(server.url);
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key: `postsched:test:${crypto.randomUUID()}`, commandTimeoutMs: 300 });
    await store.set(EXPIRED);
    await server.stop();
    let refreshes = 0;
    const manager = new TokenManager({ oauth: { refresh: async () => (refreshes++, EXPIRED) }, store });
    const error = await manager.getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect(error).toBeInstanceOf(TokenStoreUnavailableError);
    // The expired tokens send the manager to the lock first (or to a read, in a manager that reads before locking).
    expect(['lock', 'get']).toContain((error as TokenStoreError).operation);
    expect(refreshes).toBe(0);
  });
});

describe('the Redis store errors', () => {
  it.each([
    ['TokenStoreUnavailableError', new TokenStoreUnavailableError('k', 'unlock', { timeoutMs: 5 }), 'unlock'],
    ['LockTimeoutError', new LockTimeoutError('k', 5), 'lock'],
    ['LockLostError', new LockLostError('k'), 'set'],
    ['StoredTokensUnreadableError', new StoredTokensUnreadableError('k', 'missing_key'), 'get'],
  ] as const)('%s is a TokenStoreError naming its operation', (name, error, operation) => {
    expect(error).toBeInstanceOf(TokenStoreError);
    expect(error).toBeInstanceOf(RedisTokenStoreError);
    expect(error.name).toBe(name);
    expect(error.operation).toBe(operation);
    expect(error.key).toBe('k');
  });

  it('gives StoredTokensUnreadableError its problem as `code` too', () => {
    const error = new StoredTokensUnreadableError('k', 'wrong_key_or_tampered');
    expect(error.code).toBe('wrong_key_or_tampered');
    expect(error.problem).toBe('wrong_key_or_tampered');
  });
});

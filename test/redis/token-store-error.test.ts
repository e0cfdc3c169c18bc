/**
 * Every store failure is a `TokenStoreError` (issue 22): an app that catches `TokenStoreError` around
 * `getAccessToken()` catches a Redis outage too, with the stores' shared class, its `code` and `operation` kept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TokenManager, TokenStoreError, type TokenSet } from '@postsched/sdk';
import { SharedTokenStoreError as PostgresStoreError } from '@postsched/sdk/postgres';
import { RedisTokenStore, SharedTokenStoreError } from '@postsched/sdk/redis';
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

  it('rejects getAccessToken() with a TokenStoreError (the SharedTokenStoreError of the failed command)', async () => {
    server = await startRedisServer();
    conn = await kind.connect(server.url);
    const store = new RedisTokenStore({ encryptionKey: TEST_KEY, redis: conn.client, key: `postsched:test:${crypto.randomUUID()}`, commandTimeoutMs: 300 });
    await store.set(EXPIRED);
    await server.stop();
    let refreshes = 0;
    const manager = new TokenManager({ oauth: { refresh: async () => (refreshes++, EXPIRED) }, store });
    const error = await manager.getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect(error).toBeInstanceOf(SharedTokenStoreError);
    expect(['unavailable', 'timeout']).toContain((error as SharedTokenStoreError).code);
    // The expired tokens send the manager to the lock first (or to a read, in a manager that reads before locking).
    expect(['lock', 'get']).toContain((error as TokenStoreError).operation);
    expect(refreshes).toBe(0);
  });
});

describe('the shared stores\' error', () => {
  it('is one class for Redis and PostgreSQL, a TokenStoreError naming its code, store, key and operation', () => {
    // A catch written for one store catches the other's.
    expect(new PostgresStoreError({ store: 'postgres', key: 'k', table: 't', operation: 'set' }, 'lock_lost', 'lost')).toBeInstanceOf(SharedTokenStoreError);
    const error = new SharedTokenStoreError({ store: 'redis', key: 'k', operation: 'lock' }, 'lock_timeout', 'waited', { timeoutMs: 5 });
    expect(error).toBeInstanceOf(TokenStoreError);
    expect(error.name).toBe('SharedTokenStoreError');
    expect(error).toMatchObject({ code: 'lock_timeout', store: 'redis', key: 'k', operation: 'lock', timeoutMs: 5, table: undefined, sqlState: undefined });
  });
});

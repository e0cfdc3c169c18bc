/**
 * Ids that are not well-formed UTF-16 (a lone surrogate) are refused wherever an id becomes a stored key: written
 * as UTF-8, every lone surrogate becomes U+FFFD, so `"user\uD800"` and `"user\uDC00"` would be one row, and user B
 * would get user A's tokens. (The Postgres store, on a real server: test/postgres/create-table.test.ts.)
 */
import { TEST_KEY } from '../support/token-key.js';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryTokenStore, UserClients, ValidationError } from '@postsched/sdk';
import { RedisTokenStore, RedisWebhookDedupe } from '@postsched/sdk/redis';
import type { WebhookClaimContext } from '@postsched/sdk/webhooks';
import { memoryDedupe } from '../../src/webhooks/dedupe.js';

const LONE = ['\uD800', '\uDBFF', 'user\uD800', 'user\uDC00', '\uDC00\uD800', 'a\uD83D'];
const WELL_FORMED = ['user_42', 'user\uD83D\uDE00', 'ünïcødé'];

// Never connected: every refusal comes before a command.
const redis = new Redis({ lazyConnect: true });
afterAll(() => redis.disconnect());

const context = (postId: string): WebhookClaimContext => ({ postId, createdAt: 1_000, ttlMs: 10_000, claimId: 'c1' });

describe('a lone surrogate in an id is a ValidationError', () => {
  it('UserClients: client(), manager(), connect(), forget()', async () => {
    const storeCalls: string[] = [];
    const users = new UserClients({
      oauth: { refresh: () => Promise.reject(new Error('no refresh expected')) },
      baseUrl: 'https://api.postsched.test',
      store: (userId) => (storeCalls.push(userId), new MemoryTokenStore()),
    });
    for (const id of LONE) {
      expect(() => users.client(id)).toThrow(ValidationError);
      expect(() => users.manager(id)).toThrow(/`userId` holds a lone UTF-16 surrogate/);
      await expect(users.forget(id)).rejects.toThrow(ValidationError);
    }
    expect(storeCalls).toEqual([]);
    for (const id of WELL_FORMED) users.client(id);
    expect(storeCalls).toEqual(WELL_FORMED);
  });

  it('RedisTokenStore: its key', () => {
    for (const id of LONE) expect(() => new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: `postsched:tokens:{${id}}` })).toThrow(ValidationError);
    for (const id of WELL_FORMED) new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: `postsched:tokens:{${id}}` });
  });

  it('the webhook dedupes (memory and Redis): the event key and the post id', async () => {
    const memory = memoryDedupe();
    const shared = new RedisWebhookDedupe({ redis });
    for (const id of LONE) {
      expect(() => memory.claim('["post.published","p1",null]', context(id))).toThrow(/`postId` holds a lone UTF-16 surrogate/);
      expect(() => memory.claim(id, context('p1'))).toThrow(ValidationError);
      await expect(shared.claim('["post.published","p1",null]', context(id))).rejects.toThrow(ValidationError);
      await expect(shared.claim(id, context('p1'))).rejects.toThrow(ValidationError);
    }
    expect(memory.claim('["post.published","p1",null]', context('user\uD83D\uDE00'))).toEqual({ state: 'new', stale: false });
  });

  it('says where the surrogate sits, not the id', () => {
    const error = (() => {
      try {
        new RedisTokenStore({ encryptionKey: TEST_KEY, redis, key: 'secret-ish-id\uDC00' });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toMatch(/^`key` holds a lone UTF-16 surrogate \(U\+DC00 at index 13\)/);
    expect(error?.message).not.toContain('secret-ish-id');
  });
});

/**
 * Issue 20: a store that acknowledges a write and then loses it (a flush, a restart without persistence, a restore
 * from an older backup), and a save whose outcome is unknown while the lock is held. In one process, against a
 * service that refuses a rotated-out refresh token (RotatingService): the manager writes back what it holds instead
 * of failing, never sends a refresh token the process has seen replaced, and settles a save before giving up the lock.
 */
import { describe, expect, it } from 'vitest';
import { MemoryTokenStore, TokenManager, type TokenSet, type TokenStore, type TokenStoreSetOptions } from '@postsched/sdk';
import { generation, RotatingService } from './rotation-rig.js';

/** A store that can lose its data: `lose()` empties it, `restore(tokens)` puts an older snapshot back. */
class LossyStore implements TokenStore {
  #inner = new MemoryTokenStore();
  constructor(tokens: TokenSet) {
    this.#inner = new MemoryTokenStore(tokens);
  }
  get() {
    return this.#inner.get();
  }
  set(tokens: TokenSet, options?: TokenStoreSetOptions) {
    return this.#inner.set(tokens, options);
  }
  lose() {
    this.#inner = new MemoryTokenStore();
  }
  restore(tokens: TokenSet) {
    this.#inner = new MemoryTokenStore(tokens);
  }
}

describe('a store that loses acknowledged writes', () => {
  it('emptied: the manager writes back the tokens it holds instead of failing with no_tokens, then refreshes them', async () => {
    const service = new RotatingService();
    const store = new LossyStore(service.initial());
    const manager = new TokenManager({ oauth: service, store });
    expect(await manager.getAccessToken()).toBe('at_2');
    store.lose();

    expect(await manager.forceRefresh('at_2')).toBe('at_3'); // a 401: the store is read and found empty
    expect((await store.get())?.refreshToken).toBe('rt_3');
    expect(service.refreshes).toBe(2);
  });

  it('emptied before a manager that never held tokens reads it: no_tokens, as before (nothing to write back)', async () => {
    const service = new RotatingService();
    const store = new LossyStore(service.initial());
    store.lose();
    await expect(new TokenManager({ oauth: service, store }).getAccessToken()).rejects.toMatchObject({ reason: 'no_tokens' });
  });

  it('restored to tokens the process has seen replaced: the newer ones are written back and the rotated-out refresh token is never sent', async () => {
    const service = new RotatingService();
    const store = new LossyStore(service.initial());
    const snapshot = service.initial();
    const manager = new TokenManager({ oauth: service, store });
    expect(await manager.getAccessToken()).toBe('at_2'); // rt_1 → rt_2
    store.restore(snapshot); // back to rt_1, which the service has rotated out

    // Another manager of the process, made from the restored store, and the first one after a 401: neither sends rt_1.
    expect(await new TokenManager({ oauth: service, store }).getAccessToken()).toBe('at_2');
    expect((await store.get())?.refreshToken).toBe('rt_2');
    expect(await manager.forceRefresh('at_2')).toBe('at_3');
    expect(service.refreshes).toBe(2); // rt_1 once, rt_2 once: no refused reuse
  });
});

describe('a save whose outcome is unknown while the lock is held', () => {
  it('is tried again before the lock is given up, so the manager waiting for the lock uses the saved tokens', async () => {
    const service = new RotatingService();
    const inner = new MemoryTokenStore(service.initial());
    let failures = 2;
    let tail: Promise<unknown> = Promise.resolve();
    const written: number[] = [];
    const store: TokenStore = {
      get: () => inner.get(),
      async set(tokens, options) {
        if (options?.expectedRefreshToken !== undefined && failures-- > 0) throw new Error('ETIMEDOUT: no answer (outcome unknown)');
        written.push(generation(tokens.refreshToken));
        return inner.set(tokens, options);
      },
      lock<T>(fn: () => Promise<T>): Promise<T> {
        const run = tail.then(fn);
        tail = run.catch(() => undefined);
        return run;
      },
    };
    const holder = new TokenManager({ oauth: service, store });
    const waiter = new TokenManager({ oauth: service, store });

    const [first, second] = await Promise.all([holder.getAccessToken(), waiter.getAccessToken()]);
    expect([first, second]).toEqual(['at_2', 'at_2']);
    expect(written).toEqual([2]);
    expect(service.refreshes).toBe(1);
  });
});

/** A failing token store's own message may echo tokens: the TokenStoreError keeps what went wrong, not them. */
import { describe, expect, it } from 'vitest';
import { TokenManager, TokenStoreError, type TokenSet, type TokenStore } from '@postsched/sdk';

const STORED: TokenSet = {
  accessToken: 'at_Zq81kLmw0PxR4tYv7uNc2bHd',
  refreshToken: 'rt_9fJ2mQx7LpW3sK8vT1nB6cYe',
  expiresAt: Date.now() - 1,
  scopes: ['posts:read'],
  tokenType: 'bearer',
};
const oauth = { refresh: async (): Promise<TokenSet> => Promise.reject(new Error('not reached')) };

async function storeError(store: TokenStore): Promise<TokenStoreError> {
  const error = await new TokenManager({ oauth, store }).getAccessToken().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TokenStoreError);
  return error as TokenStoreError;
}

describe('TokenStoreError', () => {
  it('hides tokens the manager has not seen yet when the first read fails with them in its message', async () => {
    const error = await storeError({
      get: async () => Promise.reject(new SyntaxError(`Bad stored value ${JSON.stringify(STORED)}`)),
      set: async () => undefined,
    });
    expect(error.message).not.toContain(STORED.accessToken);
    expect(error.message).not.toContain(STORED.refreshToken);
    expect(error.message).toContain('SyntaxError: Bad stored value');
    expect(error.message).toContain('"accessToken":"[redacted]"');
  });

  it('hides token-shaped values under any name when a lock fails, and keeps the rest of the message', async () => {
    const error = await storeError({
      get: async () => STORED,
      set: async () => undefined,
      lock: async () => Promise.reject(new Error(`connect ECONNREFUSED 127.0.0.1:6379 (lock owner ${STORED.refreshToken})`)),
    });
    expect(error.operation).toBe('lock');
    expect(error.message).toBe("The token store's lock() failed (Error: connect ECONNREFUSED 127.0.0.1:6379 (lock owner [redacted])).");
  });
});

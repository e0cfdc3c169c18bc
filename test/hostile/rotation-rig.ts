/**
 * A token endpoint in memory that rotates refresh tokens strictly (a used one is refused with invalid_grant, as
 * the service is assumed to), and a store wrapper that records every refresh token written, so a test can check
 * that the stored refresh token only ever moves forward.
 */
import { ReauthorizationRequiredError, type TokenRefresher, type TokenSet, type TokenStore, type TokenStoreSetOptions } from '@postsched/sdk';

export class RotatingService implements TokenRefresher {
  #generation = 1;
  #valid = 'rt_1';
  refreshes = 0;
  constructor(private readonly lifetimeMs = 3_600_000) {}

  /** The first TokenSet, as a sign-in would give it; expired already unless `expiresAt` is given. */
  initial(expiresAt = Date.now() - 1_000): TokenSet {
    return { accessToken: 'at_1', refreshToken: 'rt_1', expiresAt, scopes: ['posts:read'], tokenType: 'bearer' };
  }

  async refresh(previous: TokenSet): Promise<TokenSet> {
    this.refreshes++;
    if (previous.refreshToken !== this.#valid) throw new ReauthorizationRequiredError('invalid_grant');
    const n = ++this.#generation;
    this.#valid = `rt_${n}`;
    return { accessToken: `at_${n}`, refreshToken: `rt_${n}`, expiresAt: Date.now() + this.lifetimeMs, scopes: previous.scopes, tokenType: 'bearer' };
  }
}

/** The generation number of a refresh token `rt_<n>`. */
export function generation(refreshToken: string | undefined): number {
  return Number(refreshToken?.slice(3) ?? NaN);
}

/** Wraps a store: records the refresh token of each write that landed, and lets a test break calls. */
export class RecordingStore implements TokenStore {
  readonly written: Array<string | undefined> = [];
  /** Called before each set; may throw, or return 'land-then-fail' to write and then throw. */
  onSet: ((tokens: TokenSet) => void | 'land-then-fail') | undefined;
  constructor(readonly inner: TokenStore) {}

  get(): Promise<TokenSet | undefined> {
    return this.inner.get();
  }

  async set(tokens: TokenSet, options?: TokenStoreSetOptions): Promise<void | boolean> {
    const mode = this.onSet?.(tokens);
    const result = await this.inner.set(tokens, options);
    if (result !== false) this.written.push(tokens.refreshToken);
    if (mode === 'land-then-fail') throw new Error('ETIMEDOUT: the command timed out (it reached the store all the same)');
    return result;
  }

  /** Whether every write moved the refresh token forward. */
  monotonic(): boolean {
    return this.written.every((rt, i) => i === 0 || generation(rt) >= generation(this.written[i - 1]));
  }
}

/**
 * A store outage longer than a refresh's lease, while the holder saves the tokens it just obtained (issue: "a long
 * database outage during a save logs users out"). Two managers stand for two processes (each its own store object,
 * hence its own lock, and its own refresher, hence no shared in-process memory), against one token service that
 * revokes the whole grant when a rotated-out refresh token comes back. Counted: users logged out, refreshes sent.
 */
import { ReauthorizationRequiredError, TokenManager, type TokenRefresher, type TokenSet, type TokenStore } from '@postsched/sdk';

/** One grant per user: strict rotation with reuse detection (a rotated-out refresh token revokes the grant). */
export class RevokingService {
  readonly #valid = new Map<string, string>();
  readonly #used = new Set<string>();
  readonly revoked = new Set<string>();
  refreshes = 0;
  /** Called once the service has rotated a refresh token, before its answer reaches the caller. */
  afterRotation: (() => void) | undefined;

  initial(user: string): TokenSet {
    this.#valid.set(user, `rt_${user}_1`);
    return { accessToken: `at_${user}_1`, refreshToken: `rt_${user}_1`, expiresAt: Date.now() - 1_000, scopes: ['posts:read'], tokenType: 'bearer' };
  }

  /** A refresher as one process's OAuthClient would be (its own object: processes share nothing in memory). */
  client(): TokenRefresher {
    return { timeoutMs: 100, refresh: (previous) => this.#refresh(previous) } as TokenRefresher;
  }

  async #refresh(previous: TokenSet): Promise<TokenSet> {
    this.refreshes++;
    const rt = previous.refreshToken as string;
    const user = rt.split('_')[1] as string;
    if (this.#used.has(rt)) this.revoked.add(user); // reuse detected: the whole grant dies
    if (this.revoked.has(user) || this.#valid.get(user) !== rt) throw new ReauthorizationRequiredError('invalid_grant');
    this.#used.add(rt);
    const n = Number(rt.split('_')[2]) + 1;
    this.#valid.set(user, `rt_${user}_${n}`);
    this.afterRotation?.();
    return { accessToken: `at_${user}_${n}`, refreshToken: `rt_${user}_${n}`, expiresAt: Date.now() + 3_600_000, scopes: previous.scopes, tokenType: 'bearer' };
  }
}

export interface OutageStores {
  /** A store of `user`'s tokens for one "process" (its own object and lock), whose calls fail while the outage lasts. */
  store(user: string, process: 'holder' | 'next'): TokenStore;
  setDown(down: boolean): void;
  /** Resolves once `user`'s lease has expired in the database (polled, not timed). */
  leaseExpired(user: string): Promise<void>;
}

/**
 * For each user: the holder refreshes, the outage starts as the service answers, the holder's save fails past its
 * bound and goes on in the background; the lease expires in the database; the outage ends; the next process asks
 * for a token at once. Returns the users logged out and what the next process got.
 */
export async function outagePastLease(stores: OutageStores, users: string[]) {
  const service = new RevokingService();
  const next: Array<string | unknown> = [];
  for (const user of users) {
    await stores.store(user, 'next').set(service.initial(user));
    service.afterRotation = () => stores.setDown(true);
    const holder = new TokenManager({ oauth: service.client(), store: stores.store(user, 'holder'), storeTimeoutMs: 200 });
    const holderCall = await holder.getAccessToken().catch((e: unknown) => e);
    service.afterRotation = undefined;
    await stores.leaseExpired(user);
    stores.setDown(false);
    const other = new TokenManager({ oauth: service.client(), store: stores.store(user, 'next'), storeTimeoutMs: 3_000 });
    next.push(await other.getAccessToken().catch((e: unknown) => e));
    if (!(holderCall instanceof Error)) throw new Error('the holder was expected to fail its save during the outage');
  }
  return { loggedOut: service.revoked.size, refreshes: service.refreshes, next };
}

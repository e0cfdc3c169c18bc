/**
 * The token manager's fresh-token cache: the TokenSet it hands out and until when, read by the hot path with a clock
 * read and a comparison, no I/O.
 */
import { sameTokens } from './token-set.js';
import type { TokenSet } from './types.js';

/**
 * A token this manager just obtained is handed out for at least this long, whatever its `expires_in` says: a
 * service answering `expires_in: 0` (or 30 with the 60 s margin) would otherwise be refreshed, and its refresh
 * token rotated, on every call. A 401 still refreshes at once (`forceRefresh`).
 */
const MIN_REFRESH_INTERVAL_MS = 5_000;

/** When the tokens being held were obtained: by this manager's refresh that started at `obtainedAt`, or not. */
export interface HoldOptions {
  /** When this manager's refresh that got them started; absent for tokens read from the store or given. */
  readonly obtainedAt?: number | undefined;
  /**
   * Handed out until they expire, not until the margin: their refresh token was refused, and the access token is
   * still valid (calls go on until it expires).
   */
  readonly toExpiry?: boolean | undefined;
}

export class FreshToken {
  /** The last TokenSet read from or written to the store. */
  tokens: TokenSet | undefined;
  /** Until when (epoch ms) `tokens` is handed out without a refresh. */
  #freshUntil = 0;

  constructor(readonly refreshMarginMs: number) {}

  /** The access token when the held one is fresh (and not `rejected`), else `undefined`. */
  peek(rejected?: string): string | undefined {
    const tokens = this.tokens;
    return tokens !== undefined && tokens.accessToken !== rejected && Date.now() < this.#freshUntil ? tokens.accessToken : undefined;
  }

  /** Whether `tokens` may be handed out now: fresh (by the held expiry when they are the held ones) and not `rejected`. */
  isUsable(tokens: TokenSet, rejected: string | undefined): boolean {
    if (tokens.accessToken === rejected) return false;
    const held = this.tokens;
    return Date.now() < (held !== undefined && sameTokens(held, tokens) ? this.#freshUntil : this.#until(tokens, Date.now()));
  }

  /**
   * Makes `tokens` (which the store holds) the ones handed out. They are refreshed at most half their lifetime early,
   * counted from when this manager obtained them or first saw them in the store: a service answering an `expires_in`
   * under the margin (a grant's last minutes) gets one refresh per token from the fleet, not one per call of every
   * process that did not obtain it. Tokens this manager obtained are used for at least `MIN_REFRESH_INTERVAL_MS`;
   * the same tokens again keep their expiry.
   */
  hold(tokens: TokenSet, { obtainedAt, toExpiry }: HoldOptions = {}): TokenSet {
    const previous = this.tokens;
    if (toExpiry === true) {
      this.#freshUntil = tokens.expiresAt;
    } else if (obtainedAt !== undefined) {
      this.#freshUntil = Math.max(this.#until(tokens, obtainedAt), Date.now() + MIN_REFRESH_INTERVAL_MS);
    } else if (previous === undefined || !sameTokens(previous, tokens)) {
      this.#freshUntil = this.#until(tokens, Date.now());
    }
    this.tokens = tokens;
    return tokens;
  }

  /** Nothing is handed out any more (the grant is marked dead, or the tokens removed): the next call reads the store. */
  drop(): void {
    this.tokens = undefined;
    this.#freshUntil = 0;
  }

  /** Until when `tokens`, obtained or first seen at `since`, are handed out: the margin is at most half their lifetime. */
  #until(tokens: TokenSet, since: number): number {
    return tokens.expiresAt - Math.min(this.refreshMarginMs, Math.max(0, tokens.expiresAt - since) / 2);
  }
}

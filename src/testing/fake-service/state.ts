/**
 * The fake's in-memory state: what the service knows (apps, accounts, posts, media, grants, tokens,
 * webhook endpoints) and the wire shapes it answers with. One `State` per fake; nothing is global.
 */
import type { WebhookEventType } from '../../webhooks/index.js';

/**
 * A post as the fake holds and sends it (the wire contract's post, plus any extra fields the client sent). The fake's
 * own type: the main entry's `Post` is what the client returns.
 */
export interface FakePost {
  /** `post_…` */
  id: string;
  /** The target accounts. */
  account_ids: string[];
  /** When it publishes, ISO 8601 UTC. */
  publish_at: string;
  /** Its state on the fake. */
  status: 'scheduled' | 'published' | 'failed' | 'deleted';
  /** The post's text. */
  text?: string;
  /** Attached media ids. */
  media_ids?: string[];
  /** When it was created, ISO 8601 UTC (fake clock). */
  created_at: string;
  /** When it was published, ISO 8601 UTC (fake clock). */
  published_at?: string;
  [extra: string]: unknown;
}

/** A connected social account as the fake holds and sends it (the main entry's `Account` is the client's). */
export interface FakeAccount {
  /** `acc_…` */
  id: string;
  /** The social network (`x`, `linkedin`…). */
  platform: string;
  /** Display name. */
  name: string;
}

/** A media item as the fake holds and sends it (the main entry's `MediaItem` is the client's). */
export interface FakeMediaItem {
  /** `media_…` */
  id: string;
  /** The file name of the upload. */
  filename: string;
  /** The MIME type of the upload. */
  content_type: string;
  /** Bytes received. */
  size: number;
  /** When it was uploaded, ISO 8601 UTC (fake clock). */
  created_at: string;
}

/** Post-level analytics as the fake sends them (the main entry's `PostAnalytics` is the client's). */
export interface FakePostAnalytics {
  /** The post these counters belong to. */
  post_id: string;
  /** Times shown. */
  impressions: number;
  /** Likes. */
  likes: number;
  /** Shares. */
  shares: number;
  /** Comments. */
  comments: number;
  /** Link clicks. */
  clicks: number;
}

/** A registered app (spec section 2): its client credentials and the exact redirect URIs it may use. */
export interface RegisteredApp {
  /** The app's client_id. */
  clientId: string;
  /** The app's client_secret. */
  clientSecret: string;
  /** The exact redirect URIs the app may use. */
  redirectUris: string[];
  /** The name the consent page shows (default: the client id). */
  name?: string;
}

/** What the user answers at `/oauth/authorize`: at once (`approve`, `deny`), or on a consent page (`prompt`). */
export type ConsentMode = 'approve' | 'deny' | 'prompt';

/** A checked authorization request waiting on the consent page's Allow or Deny. */
export interface ConsentRequest {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state: string;
  codeChallenge: string;
  expiresAt: number;
}

/** A webhook endpoint (spec section 2): where events go, the signing secret, and the subscribed events. */
export interface WebhookEndpoint {
  /** `we_…` */
  id: string;
  /** Where deliveries are POSTed. */
  url: string;
  /** The signing secret: give it to `verifyWebhook`. */
  secret: string;
  /** The events sent to this endpoint. */
  events: WebhookEventType[];
}

/** The four events of spec section 6: the webhooks entry's type, so that the built types name one. */
export type { WebhookEventType };

/**
 * The fake's refresh-token policy: what the token endpoint accepts and refuses, on the fake's clock. The spec
 * does not show the refresh token's lifetime or rotation, and real services differ, so a test can run against each:
 *
 * - `rotation: 'rotate'` (default): each refresh answers a new refresh token, and the one sent is single use: sent
 *   again, it is refused with `invalid_grant`.
 * - `rotation: 'static'`: the refresh token never changes; each refresh answers the same one.
 * - `rotation: 'retain-until-used'`: each refresh answers a new refresh token, and the one sent stays valid until
 *   the new one is first used (the new refresh token in a refresh, or its access token in an API call).
 * - `reuseDetection: true`: a rotated-out refresh token sent again (outside any window) revokes the whole grant:
 *   every refresh and access token of that authorization is refused from then on (RFC 9700 §4.14.2).
 * - `overlapMs`: with `'rotate'`, a rotated-out refresh token stays valid for this long after its rotation.
 * - `grantLifetimeMs`: the grant ends this long after the user's consent: from then on every refresh is refused
 *   (`invalid_grant`), and no access token outlives it (near the end, `expires_in` is cut short).
 * - `idleLifetimeMs`: a refresh token not used for this long (since it was issued or last accepted) is refused.
 *
 * Every count is in milliseconds of the fake's clock (`fake.clock.advance`), so no test waits for real.
 *
 * @example
 * // X-like: single use, a reused token kills the grant; a 10 s grace for a client whose answer got lost.
 * createFakeService({ refreshPolicy: { rotation: 'rotate', reuseDetection: true, overlapMs: 10_000 } });
 * // Spotify-like: no rotation, and every grant ends after ~6 months.
 * createFakeService({ refreshPolicy: { rotation: 'static', grantLifetimeMs: 180 * 24 * 3_600_000 } });
 * // Shopify-like: the old refresh token is kept until the new one is used.
 * createFakeService({ refreshPolicy: { rotation: 'retain-until-used' } });
 */
export interface RefreshPolicy {
  /** `'rotate'` (default), `'static'` or `'retain-until-used'`. */
  rotation?: 'static' | 'rotate' | 'retain-until-used';
  /** A rotated-out refresh token sent again revokes its whole grant (default `false`: only it is refused). */
  reuseDetection?: boolean;
  /** With `rotation: 'rotate'`: how long a rotated-out refresh token is still accepted, in ms (default 0). */
  overlapMs?: number;
  /** The grant's absolute lifetime from the consent, in ms (default: none). */
  grantLifetimeMs?: number;
  /** A refresh token unused for this long, in ms, is refused (default: none). */
  idleLifetimeMs?: number;
}

/** One authorization: the family of every code and token that descends from one consent. */
export interface Grant {
  id: string;
  clientId: string;
  scopes: string[];
  revoked: boolean;
  /** When the grant ends for good (`refreshPolicy.grantLifetimeMs`), fake clock; `undefined`: never. */
  endsAt?: number;
  /** Token requests that named this grant's code or refresh tokens, refused ones included. */
  tokenRequests: number;
  /** Rotated-out refresh tokens of this grant presented again outside any window. */
  reuseEvents: number;
}

export interface AuthorizationCode {
  grant: Grant;
  redirectUri: string;
  codeChallenge: string;
  expiresAt: number;
  used: boolean;
}

export interface AccessToken {
  grant: Grant;
  scopes: string[];
  expiresAt: number;
  /** The refresh token issued with it: its first use retires that token's predecessor (`retain-until-used`). */
  refreshToken?: RefreshToken;
}

export interface RefreshToken {
  grant: Grant;
  scopes: string[];
  /** When it was last issued or accepted (fake clock), for `refreshPolicy.idleLifetimeMs`. */
  lastUsedAt: number;
  /** When a refresh replaced it (fake clock); `undefined` while it is the current one. */
  rotatedAt?: number;
  /** No longer accepted, whatever window: its successor was used (`retain-until-used`) or its window closed. */
  retired: boolean;
  /** The token it replaced, still accepted until this one is first used (`retain-until-used`). */
  predecessor?: RefreshToken;
}

/** What the fake keeps of an upload: the metadata, and at most a bounded prefix of the bytes. */
export interface StoredMedia {
  /** The media item as the API returned it. */
  item: FakeMediaItem;
  /** The first bytes of the file (at most `media.keepBytes`), for assertions on what arrived. */
  prefix: Uint8Array;
}

export interface StoredAnswer {
  fingerprint: string;
  status: number;
  headers: [string, string][];
  body: string;
  storedAt: number;
}

export class State {
  readonly apps = new Map<string, RegisteredApp>();
  readonly accounts = new Map<string, FakeAccount>();
  readonly failingAccounts = new Set<string>();
  readonly posts = new Map<string, FakePost>();
  readonly media = new Map<string, StoredMedia>();
  readonly codes = new Map<string, AuthorizationCode>();
  readonly accessTokens = new Map<string, AccessToken>();
  readonly refreshTokens = new Map<string, RefreshToken>();
  readonly endpoints = new Map<string, WebhookEndpoint>();
  /** Idempotency-Key answers, keyed by client and key. */
  readonly idempotency = new Map<string, StoredAnswer | 'in-flight'>();
  /** Consent pages shown and not answered yet, by their one-time id. */
  readonly consentRequests = new Map<string, ConsentRequest>();
  consent: ConsentMode = 'approve';
}

/**
 * The fake's in-memory state: what the service knows (apps, accounts, posts, media, grants, tokens,
 * webhook endpoints) and the wire shapes it answers with. One `State` per fake; nothing is global.
 */

/** A post on the wire (the wire contract's Post, plus any extra fields the client sent). */
export interface Post {
  id: string;
  account_ids: string[];
  publish_at: string;
  status: 'scheduled' | 'published' | 'failed' | 'deleted';
  text?: string;
  media_ids?: string[];
  created_at: string;
  published_at?: string;
  [extra: string]: unknown;
}

/** A connected social account on the wire. */
export interface Account {
  id: string;
  platform: string;
  name: string;
}

/** A media item on the wire. */
export interface MediaItem {
  id: string;
  filename: string;
  content_type: string;
  size: number;
  created_at: string;
}

/** Post-level analytics on the wire. */
export interface PostAnalytics {
  post_id: string;
  impressions: number;
  likes: number;
  shares: number;
  comments: number;
  clicks: number;
}

/** A registered app (spec section 2): its client credentials and the exact redirect URIs it may use. */
export interface RegisteredApp {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

/** A webhook endpoint (spec section 2): where events go, the signing secret, and the subscribed events. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  secret: string;
  events: WebhookEventType[];
}

/** The four events of spec section 6. */
export type WebhookEventType = 'post.scheduled' | 'post.published' | 'post.failed' | 'post.deleted';

/** Every event type, in the spec's order. */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'post.scheduled',
  'post.published',
  'post.failed',
  'post.deleted',
];

/** One authorization: the family of every code and token that descends from one consent. */
export interface Grant {
  id: string;
  clientId: string;
  scopes: string[];
  revoked: boolean;
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
}

export interface RefreshToken {
  grant: Grant;
  scopes: string[];
  used: boolean;
}

/** What the fake keeps of an upload: the metadata, and at most a bounded prefix of the bytes. */
export interface StoredMedia {
  item: MediaItem;
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
  readonly accounts = new Map<string, Account>();
  readonly failingAccounts = new Set<string>();
  readonly posts = new Map<string, Post>();
  readonly media = new Map<string, StoredMedia>();
  readonly codes = new Map<string, AuthorizationCode>();
  readonly accessTokens = new Map<string, AccessToken>();
  readonly refreshTokens = new Map<string, RefreshToken>();
  readonly endpoints = new Map<string, WebhookEndpoint>();
  /** Idempotency-Key answers, keyed by client and key. */
  readonly idempotency = new Map<string, StoredAnswer | 'in-flight'>();
  consent: 'approve' | 'deny' = 'approve';
}

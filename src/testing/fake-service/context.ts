/**
 * What every part of the fake shares: the state, the clock, the counters, and the way to fire an event.
 * Routes take a `Context` instead of importing each other, so each file stays one concept.
 */
import type { Scheduler } from './clock.js';
import type { FakePost, RefreshPolicy, State, WebhookEventType } from './state.js';

/** Counters for assertions ("the retried POST created one post", "one refresh for 50 calls"). */
export interface FakeStats {
  /** Token requests that reached the token endpoint, by `grant_type` (refused ones included). */
  tokenRequests: {
    /** Code exchanges. */
    authorization_code: number;
    /** Refreshes. */
    refresh_token: number;
    /** Any other or missing `grant_type`. */
    other: number;
  };
  /** Posts actually created (an idempotent replay does not count). */
  postsCreated: number;
  /** Answers lost after the route acted (`faults.reset({ afterCommit: true })`). */
  answersDropped: number;
  /** Requests per route, keyed `"METHOD /route/{param}"`, faulted ones included. */
  requests: Record<string, number>;
  /** Grant-level events, all grants together (one grant's own counts: `fake.grantOf(token)`). */
  grants: {
    /** Grants revoked: by reuse detection, or by a second use of an authorization code. */
    revocations: number;
    /** Rotated-out refresh tokens sent again outside any window (refused, and revoking under reuse detection). */
    reuseEvents: number;
  };
}

/** Media upload options: how many bytes of each upload to keep, and a hook seeing every byte. */
export interface MediaOptions {
  /** How many leading bytes of each upload the fake keeps (default 64 KiB); the rest is counted, not kept. */
  keepBytes?: number;
  /** Called with every chunk of a `file` part as it streams in (to hash it incrementally in a test). */
  onChunk?: (chunk: Uint8Array, part: { filename: string; contentType: string }) => void;
}

export interface Context {
  readonly state: State;
  readonly clock: Scheduler;
  readonly stats: FakeStats;
  /** The base URL, which is also the RFC 9207 issuer (`iss`). */
  issuer(): string;
  /** Fires `event` for `post` to every subscribed endpoint. */
  emit(event: WebhookEventType, post: FakePost): void;
  readonly accessTokenTtlMs: number;
  readonly codeTtlMs: number;
  readonly refreshPolicy: Required<RefreshPolicy>;
  readonly media: Required<Pick<MediaOptions, 'keepBytes'>> & Pick<MediaOptions, 'onChunk'>;
}

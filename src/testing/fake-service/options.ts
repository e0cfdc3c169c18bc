/** The options of `createFakeService`, each documented where it is declared. */
import type { ClockOptions } from './clock.js';
import type { MediaOptions } from './context.js';
import type { ConsentMode, RefreshPolicy, WebhookEventType } from './state.js';
import type { WebhookDeliveryOptions } from './webhooks-delivery.js';
import type { WireProfile } from './wire-profile.js';

/** A registered app to create (spec section 2). Omitted credentials are generated. */
export interface AppInput {
  /** Default: a generated `client_…`. */
  clientId?: string;
  /** Default: a generated secret. */
  clientSecret?: string;
  /** Absolute URLs; `redirect_uri` must equal one of them exactly (RFC 6749 §3.1.2.3). */
  redirectUris: string[];
  /** The app's name on the consent page (`consent: 'prompt'`). Default: the client id. */
  name?: string;
}

/** A connected account to seed. `failPublication: true` makes every post targeting it end `failed`. */
export interface AccountInput {
  /** Default: a generated `acc_…`. */
  id?: string;
  /** Default `x`. */
  platform?: string;
  /** Default `Test account`. */
  name?: string;
  /** Every post targeting this account ends `failed` (and fires `post.failed`). */
  failPublication?: boolean;
}

/** A webhook endpoint to register. Omitted `secret` is generated; omitted `events` means all four. */
export interface WebhookEndpointInput {
  /** Where to POST deliveries (absolute URL). */
  url: string;
  /** The signing secret. Default: a generated `whsec_…`. */
  secret?: string;
  /** The events to send. Default: all four. */
  events?: WebhookEventType[];
}

/**
 * Options of {@link createFakeService}. Every field is optional.
 *
 * @example
 * const fake = createFakeService({
 *   apps: [{ clientId: 'app_1', clientSecret: 'secret_1', redirectUris: ['http://localhost:3000/callback'] }],
 *   accounts: [{ id: 'acc_1', platform: 'x', name: 'Acme on X' }],
 *   webhookEndpoints: [{ url: 'http://localhost:3000/webhooks', secret: 'whsec_test' }],
 * });
 */
export interface FakeServiceOptions {
  /** The service's base URL (and RFC 9207 issuer); a path (`/v1`) prefixes every route. Default `https://api.postsched.test`. */
  baseUrl?: string;
  /** `'manual'` (default: time moves only with `fake.clock.advance`), `'real'`, or `{ mode, start }`. */
  clock?: 'manual' | 'real' | ClockOptions;
  /** Registered apps. */
  apps?: AppInput[];
  /** Connected accounts. Default: two demo accounts, `acc_demo_x` and `acc_demo_linkedin`. */
  accounts?: AccountInput[];
  /** Webhook endpoints. */
  webhookEndpoints?: WebhookEndpointInput[];
  /**
   * What the user answers at `/oauth/authorize`: `'approve'` (default) and `'deny'` redirect at once, as tests
   * want; `'prompt'` shows a real consent page (the app's name, the scopes, Allow / Deny) for a person or a
   * browser test to answer, as `postsched mock` does.
   */
  consent?: ConsentMode;
  /** Webhook delivery: fetch, attempts, backoff, per-attempt timeout. */
  webhooks?: WebhookDeliveryOptions;
  /** Upload handling: bytes kept per upload, chunk observer. */
  media?: MediaOptions;
  /**
   * Access-token lifetime in seconds (default 3600, spec 5.3). A short one (60) makes an app refresh within a minute,
   * to watch it happen (`postsched mock --token-ttl 60s`).
   */
  accessTokenTtlSeconds?: number;
  /** Authorization-code lifetime (default 60 s). */
  codeTtlSeconds?: number;
  /**
   * What a second use of a refresh token does: `'reject'` (default) refuses it; `'revoke-grant'` also revokes
   * every token of that authorization (RFC 9700 §4.14.2), the stricter behaviour some services have.
   * The same as `refreshPolicy: { reuseDetection: true }`, which says more (rotation, windows, lifetimes).
   */
  refreshTokenReuse?: 'reject' | 'revoke-grant';
  /**
   * How the service treats refresh tokens: rotation, reuse detection, windows and lifetimes (see
   * {@link RefreshPolicy}). Default: `{ rotation: 'rotate' }`, single use, no reuse detection, no lifetime.
   */
  refreshPolicy?: RefreshPolicy;
  /**
   * How the resource routes write their answers, to try a client against services that send less, or other, than
   * the SDK assumes (the OAuth answers never change):
   * - `'full'` (default): every field the fake keeps, the SDK's assumed ones included.
   * - `'minimal'`: only the fields the service spec gives (a post's `id` and `account_ids`, an account's `id`) and
   *   what a flow needs to go on (a page's `data` and `next_cursor`, a media item's `id`).
   * - `'noisy'`: each assumed field randomly kept, left out, `null` or of another type; unknown status values,
   *   unknown fields and nested objects added; keys shuffled. Seeded by `seed`, so a run can be replayed.
   *
   * @example
   * const fake = createFakeService({ profile: 'noisy', seed: 42 });
   */
  profile?: WireProfile;
  /** Seed of the `noisy` profile's choices (an integer, default 1): the same seed and calls give the same answers. */
  seed?: number;
}

export const DEMO_ACCOUNTS: AccountInput[] = [
  { id: 'acc_demo_x', platform: 'x', name: 'Demo on X' },
  { id: 'acc_demo_linkedin', platform: 'linkedin', name: 'Demo on LinkedIn' },
];

/** The options of `createFakeService`, each documented where it is declared. */
import type { ClockOptions } from './clock.js';
import type { MediaOptions } from './context.js';
import type { WebhookEventType } from './state.js';
import type { WebhookDeliveryOptions } from './webhooks-delivery.js';

/** A registered app to create (spec section 2). Omitted credentials are generated. */
export interface AppInput {
  clientId?: string;
  clientSecret?: string;
  /** Absolute URLs; `redirect_uri` must equal one of them exactly (RFC 6749 §3.1.2.3). */
  redirectUris: string[];
}

/** A connected account to seed. `failPublication: true` makes every post targeting it end `failed`. */
export interface AccountInput {
  id?: string;
  platform?: string;
  name?: string;
  failPublication?: boolean;
}

/** A webhook endpoint to register. Omitted `secret` is generated; omitted `events` means all four. */
export interface WebhookEndpointInput {
  url: string;
  secret?: string;
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
  /** What the simulated user answers on the consent screen (default `'approve'`). */
  consent?: 'approve' | 'deny';
  /** Webhook delivery: fetch, attempts, backoff, per-attempt timeout. */
  webhooks?: WebhookDeliveryOptions;
  /** Upload handling: bytes kept per upload, chunk observer. */
  media?: MediaOptions;
  /** Access-token lifetime (default 3600 s, spec 5.3). */
  accessTokenTtlSeconds?: number;
  /** Authorization-code lifetime (default 60 s). */
  codeTtlSeconds?: number;
  /**
   * What a second use of a refresh token does: `'reject'` (default) refuses it; `'revoke-grant'` also revokes
   * every token of that authorization (RFC 9700 §4.14.2), the stricter behaviour some services have.
   */
  refreshTokenReuse?: 'reject' | 'revoke-grant';
}

export const DEMO_ACCOUNTS: AccountInput[] = [
  { id: 'acc_demo_x', platform: 'x', name: 'Demo on X' },
  { id: 'acc_demo_linkedin', platform: 'linkedin', name: 'Demo on LinkedIn' },
];

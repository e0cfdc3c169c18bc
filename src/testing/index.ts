/**
 * `@postsched/sdk/testing`: a faithful in-memory fake of the Post Scheduling Service for your tests,
 * usable in-process (msw, or any fetch handler) or on a real port of 127.0.0.1.
 *
 * msw is an optional peer: nothing here imports it; `mswHandlers(http)` takes msw's `http` from your test.
 * Nothing here imports `node:` modules either, except `listen()`, which loads `node:http` lazily.
 */
export { createFakeService } from './fake-service/create.js';
export type { FakeGrant, FakeService, IssuedTokens, MswHttpLike } from './fake-service/create.js';
export type { FakeClock, ClockOptions } from './fake-service/clock.js';
export type { FakeStats, MediaOptions } from './fake-service/context.js';
export type { AfterCommit, FakeFaults, FaultTarget } from './fake-service/faults.js';
export type { ListeningFakeService } from './fake-service/listen.js';
export type { AccountInput, AppInput, FakeServiceOptions, WebhookEndpointInput } from './fake-service/options.js';
export type {
  ConsentMode,
  FakeAccount,
  FakeMediaItem,
  FakePost,
  FakePostAnalytics,
  RefreshPolicy,
  RegisteredApp,
  StoredMedia,
  WebhookEndpoint,
  WebhookEventType,
} from './fake-service/state.js';
export type { WebhookDelivery, WebhookDeliveryOptions } from './fake-service/webhooks-delivery.js';
export type { WireProfile } from './fake-service/wire-profile.js';
/** Signs a body as the service does (Web Crypto backend, so this entry runs in every runtime). */
export { signWebhook } from '../webhooks/index.js';
export type { SignWebhookOptions } from '../webhooks/verify.js';
export {
  signedWebhookDelivery,
  webhookFixture,
  webhookFixtures,
  type SignedWebhookDelivery,
  type WebhookFixtureOverrides,
  type WebhookFixtures,
} from './webhook-fixtures.js';
export {
  tokenStoreConformance,
  type TokenStoreConformanceCheck,
  type TokenStoreConformanceOptions,
} from './token-store-conformance.js';

/**
 * `@postsched/sdk/redis`: a token store, a webhook dedupe store and a rate limiter shared by many processes through Redis.
 * Node-only entry (`node:async_hooks`); ioredis and node-redis are optional peer dependencies, typed structurally and never
 * imported, so neither lands in any bundle.
 */
export { RedisTokenStore, type RedisTokenStoreOptions } from './redis-token-store.js';
export { RedisTokenSpace, type RedisTokenSpaceOptions } from './redis-token-space.js';
export type { GrantInfo, GrantPage, GrantsOptions, GrantStatus } from '../store/grant-space.js';
export { rotateTokenEncryption, type RotateTokenEncryptionOptions } from './rotate-token-encryption.js';
export type { TokenRotationResult } from '../store/token-rotation.js';
export type { EncryptionKey, EncryptionKeyring } from '../store/token-cipher.js';
export { RedisRateLimiter, type RedisRateLimiterOptions } from './redis-rate-limiter.js';
export { RedisWebhookDedupe, type RedisWebhookDedupeOptions } from './redis-webhook-dedupe.js';
export { WebhookDedupeUnavailableError, type WebhookDedupeOperation } from '../store/webhook-dedupe-error.js';
export type { IORedisClientLike, NodeRedisClientLike, NodeRedisClusterLike, RedisClientLike } from './redis-connection.js';
export { SharedTokenStoreError, type SharedTokenStoreErrorCode, type StoreFailureSite, type StoredTokensProblem } from '../store/errors.js';

/**
 * `@postsched/sdk/postgres`: a token store and a webhook dedupe store shared by many processes through PostgreSQL tables.
 * Node-only entry (`node:async_hooks`); node-postgres (`pg`) is an optional peer dependency, typed structurally and
 * never imported, so it lands in no bundle.
 */
export { PostgresTokenStore, type PostgresTokenStoreOptions } from './postgres-token-store.js';
export { PostgresTokenTable, type PostgresTokenTableOptions } from './postgres-token-table.js';
export type { GrantInfo, GrantPage, GrantsOptions, GrantStatus } from '../store/grant-space.js';
export { rotateTokenEncryption, type RotateTokenEncryptionOptions } from './rotate-token-encryption.js';
export type { TokenRotationResult } from '../store/token-rotation.js';
export type { EncryptionKey, EncryptionKeyring } from '../store/token-cipher.js';
export { createTokenTable, tokenTableSql, type TokenTableOptions } from './create-table.js';
export { SharedTokenStoreError, type SharedTokenStoreErrorCode, type StoreFailureSite, type StoredTokensProblem } from '../store/errors.js';
export type { PgPoolLike, PgResultLike } from './pg-connection.js';
export { PostgresWebhookDedupe, type PostgresWebhookDedupeOptions } from './postgres-webhook-dedupe.js';
export { createWebhookDedupeTable, webhookDedupeTableSql, type WebhookDedupeTableOptions } from './webhook-dedupe-table.js';
export { WebhookDedupeUnavailableError, type WebhookDedupeOperation } from '../store/webhook-dedupe-error.js';

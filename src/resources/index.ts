/** The typed resource clients and their types. */
export * from './accounts.js';
export * from './analytics.js';
export * from './media.js';
export { Paginator, type ListParams, type Page } from './pagination.js';
export * from './posts.js';
export { AccountSchema, MediaItemSchema, PostAnalyticsSchema, PostSchema } from './wire-contract.js';

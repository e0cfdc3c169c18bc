/** Everything the main entry exports (both `index.ts` and `index.node.ts`). */
export * from './core/errors.js';
export * from './oauth/types.js';
export * from './oauth/index.js';
export * from './client.js';
export * from './resources/index.js';
export * from './user-clients.js';
export type { GrantInfo, GrantPage, GrantsOptions, GrantStatus, KeepGrantsAliveOptions, ListedStatus, KeepGrantsAliveResult, TokenSpace } from './store/grant-space.js';

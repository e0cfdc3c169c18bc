/** Everything public except the webhook functions (whose backend depends on the runtime). */
export * from './errors.js';
export * from './oauth/types.js';
export * from './oauth/index.js';
export * from './client.js';
export * from './resources/index.js';
export * from './user-clients.js';

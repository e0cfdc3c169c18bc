/** The OAuth helper, the token manager and their errors. */
export { OAuthClient, type AuthorizationRequest, type CallbackChecks, type OAuthClientOptions } from './oauth-client.js';
export { TokenManager, type TokenManagerOptions } from './token-manager.js';
export { MemoryTokenStore } from './memory-token-store.js';
export { DEFAULT_EXPIRES_IN_SECONDS } from './normalize.js';
export type { FetchLike } from './token-fetch.js';
export {
  OAuthCallbackError,
  OAuthError,
  OAuthResponseError,
  ReauthorizationRequiredError,
  TokenStoreError,
  type OAuthCallbackErrorCode,
  type OAuthResponseErrorCode,
  type ReauthorizationReason,
  type TokenStoreOperation,
} from './errors.js';

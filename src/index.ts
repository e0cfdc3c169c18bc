/**
 * `@postsched/sdk`: the main entry for every runtime (Web standards only).
 * Node resolves `index.node.ts` instead (package.json "exports" → "node"), which differs only in the
 * webhook HMAC backend.
 */
export * from './main.js';
export * from './webhooks/verifier.js'; // the verifier; createWebhookHandler is in @postsched/sdk/webhooks

/** `@postsched/sdk` under Node: the main entry with the `node:crypto` webhook backend. */
export * from './main.js';
export * from './webhooks/verifier-node.js'; // the verifier; createWebhookHandler is in @postsched/sdk/webhooks

/**
 * `@postsched/sdk`: the main entry for every runtime (Web standards only): the API client, the OAuth helper and
 * their types and errors. Webhooks are `@postsched/sdk/webhooks` (a receiver imports nothing else).
 */
export * from './main.js';

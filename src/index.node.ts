/**
 * `@postsched/sdk` under Node (package.json "exports" → "node"): the same main entry. Kept as its own file so the
 * export map stays as published.
 */
export * from './main.js';

/**
 * ky, as the request path (request.ts) takes it: the package's private import `#ky` (package.json "imports").
 * This file is what Web runtimes and bundlers get (`workerd`, `edge-light`, `worker`, `browser`, and the default):
 * ky loaded with the SDK, so every bundler makes one file of it (no dynamic import to split on).
 * Node, Bun and Deno get ky.node.ts instead, which evaluates this file on the first request.
 */
export { default as ky, isTimeoutError } from 'ky';

/** Sets `ky` and `isTimeoutError` (here: they always are). */
export const loadKy = (): void => {};

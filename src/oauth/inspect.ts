/**
 * The key Node's `util.inspect` (and console.log) looks up on an object. Taken from the global symbol
 * registry so this file needs no `node:` import and stays usable in every runtime.
 */
export const INSPECT: unique symbol = Symbol.for('nodejs.util.inspect.custom') as never;

/**
 * The key Node's `util.inspect` (and console.log) looks up on an object. Taken from the global symbol
 * registry so this file needs no `node:` import and stays usable in every runtime.
 */
export const INSPECT: unique symbol = Symbol.for('nodejs.util.inspect.custom') as never;

/**
 * Makes console.log / util.inspect show `describe()` for `target`, never its fields. Used by the classes that
 * hold a secret or tokens (OAuthClient, TokenManager, MemoryTokenStore, PostSched), in their constructors.
 *
 * Why per instance rather than an `[INSPECT]()` method: a bundler must keep any class with a computed member
 * key (esbuild cannot prove the key side-effect free), and with it everything the class imports. The build
 * puts the SDK in one chunk, so such a class kept ky, zod and oauth4webapi in every bundle that imported
 * anything from the main entry. Non-enumerable: JSON.stringify and object spread never see it. `describe` is called
 * on `target` (`this`), so a class with many instances can pass one shared function instead of a closure each.
 */
export function inspectAs<T extends object>(target: T, describe: (this: T) => string): void {
  Object.defineProperty(target, INSPECT, { value: describe });
}

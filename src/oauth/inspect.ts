/**
 * The key Node's `util.inspect` (and console.log) looks up on an object. Taken from the global symbol
 * registry so this file needs no `node:` import and stays usable in every runtime.
 */
export const INSPECT: unique symbol = Symbol.for('nodejs.util.inspect.custom') as never;

/**
 * Base of the classes that hold a secret or tokens (OAuthClient, TokenManager, MemoryTokenStore, PostSched):
 * console.log / util.inspect show the text `describe` returns, never a field.
 *
 * Why a base class rather than an `[INSPECT]()` method in each: a bundler must keep any class with a computed
 * member key (esbuild cannot prove the key side-effect free), and with it everything the class imports. The
 * build puts the whole SDK in one chunk, so one such class kept ky, zod and oauth4webapi in every bundle that
 * imported anything from the main entry. Only this small class is kept now.
 */
export class Inspectable {
  readonly #describe: () => string;

  constructor(describe: () => string) {
    this.#describe = describe;
  }

  /** What console.log and util.inspect show. */
  [INSPECT](): string {
    return this.#describe();
  }
}

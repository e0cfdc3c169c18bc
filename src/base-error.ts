/**
 * The root of every error this SDK throws. It lives in its own tiny file so that
 * `@postsched/sdk/webhooks` can extend it without pulling in the HTTP or OAuth error classes.
 */

/** Key of the static string id that every error class declares (`static readonly [ERROR_ID] = 'Name'`). */
export const ERROR_ID: unique symbol = Symbol.for('@postsched/sdk/error-id') as never;

type ErrorClass = { readonly [ERROR_ID]?: string; readonly prototype: object };

/**
 * Base class of all SDK errors.
 *
 * `instanceof` works across copies of the SDK (the ESM and the CommonJS build loaded side by side, or
 * two bundled copies): a class matches an object whose prototype chain holds a class with the same id.
 * Ids are strings, not `constructor.name`, so minifiers cannot break the check.
 *
 * @example
 * try { await client.posts.get('p_1') } catch (err) {
 *   if (err instanceof PostSchedError) console.error(err.name, err.message)
 * }
 */
export class PostSchedError extends Error {
  static readonly [ERROR_ID]: string = 'PostSchedError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    const id = Object.hasOwn(new.target, ERROR_ID) ? (new.target as ErrorClass)[ERROR_ID] : undefined;
    // Non-enumerable, like Error's own `name`, so JSON.stringify shows only the error's data fields.
    Object.defineProperty(this, 'name', {
      value: id ?? new.target.name,
      enumerable: false,
      writable: true,
      configurable: true,
    });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== 'object' || value === null) return false;
    const id = Object.hasOwn(this, ERROR_ID) ? (this as ErrorClass)[ERROR_ID] : undefined;
    for (let proto = Object.getPrototypeOf(value); proto !== null; proto = Object.getPrototypeOf(proto)) {
      if (proto === this.prototype) return true;
      if (id === undefined) continue;
      const ctor = (proto as { constructor?: ErrorClass }).constructor;
      if (ctor !== undefined && Object.hasOwn(ctor, ERROR_ID) && ctor[ERROR_ID] === id) return true;
    }
    return false;
  }
}

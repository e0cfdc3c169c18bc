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
    // Non-enumerable (defineProperty's default), like Error's own `name`, so JSON.stringify shows only data fields.
    Object.defineProperty(this, 'name', { value: idOf(new.target) ?? new.target.name, writable: true, configurable: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    const id = idOf(this);
    // Primitives walk to String.prototype & co. and match nothing; null and undefined stop at once.
    for (let proto = value; proto != null; ) {
      proto = Object.getPrototypeOf(proto);
      if (proto === this.prototype || (id !== undefined && idOf((proto as { constructor?: unknown } | null)?.constructor) === id)) {
        return true;
      }
    }
    return false;
  }
}

/** The id a class declares itself (own property only: a subclass without one does not inherit its parent's). */
function idOf(ctor: unknown): string | undefined {
  return typeof ctor === 'function' && Object.hasOwn(ctor, ERROR_ID) ? (ctor as ErrorClass)[ERROR_ID] : undefined;
}

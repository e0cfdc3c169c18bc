/**
 * The root of every error this SDK throws. It lives in its own tiny file so that
 * `@postsched/sdk/webhooks` can extend it without pulling in the HTTP or OAuth error classes.
 *
 * The one pattern every error class follows: `static readonly id = 'ClassName'` (a plain string field, so a bundler
 * drops the classes an app never uses), and a machine-readable `code` on classes that have one.
 */

/** Each error's class ids, on the error itself: the same symbol in every copy of the SDK (`Symbol.for`). */
const BRAND = Symbol.for('@postsched/sdk/error-ids');

type Branded = { [BRAND]?: string[] };

/**
 * Base class of all SDK errors.
 *
 * `instanceof` works across copies of the SDK (the ESM and the CommonJS build loaded side by side, or
 * two bundled copies): each error carries the ids of its classes, and a class matches an error that holds its
 * id. Ids are strings, not `constructor.name`, so minifiers cannot break the check.
 *
 * @example
 * try { await client.posts.get('p_1') } catch (err) {
 *   if (err instanceof PostSchedError) console.error(err.name, err.message)
 * }
 */
export class PostSchedError extends Error {
  /** The class's name, kept through minification: the errors' `name`, and what `instanceof` matches. @internal */
  static readonly id: string = 'PostSchedError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    const ids: string[] = [];
    for (let type: typeof PostSchedError = new.target; type !== (Error as unknown); type = Object.getPrototypeOf(type)) {
      if (Object.hasOwn(type, 'id')) ids.push(type.id);
    }
    Object.defineProperties(this, {
      // Non-enumerable (defineProperty's default), like Error's own `name`, so JSON.stringify shows only data fields.
      name: { value: Object.hasOwn(new.target, 'id') ? new.target.id : new.target.name, writable: true, configurable: true },
      [BRAND]: { value: ids },
    });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // This copy's classes (and subclasses an app makes) by the prototype chain; another copy's errors by their ids.
    return this.prototype.isPrototypeOf(value as object) || (Object.hasOwn(this, 'id') && ((value as Branded | null | undefined)?.[BRAND] ?? []).includes(this.id));
  }
}

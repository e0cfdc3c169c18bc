/**
 * The check of every id that becomes a stored key (a user's id, a store's key, a webhook's post id): it must be
 * well-formed UTF-16. A lone surrogate (U+D800–U+DFFF without its pair) becomes U+FFFD when the key is written as
 * UTF-8 (PostgreSQL, Redis), so `"user\uD800"` and `"user\uDC00"` would name one row: two users would share tokens.
 * `String.prototype.isWellFormed` is missing on Node 20.0 (the engines' floor), hence the pattern.
 */
import { invalidOption } from './invalid-option.js';

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Throws a `ValidationError` when `value` (a string) holds a lone surrogate; the message names `name` and where the
 * surrogate sits, never the id itself (a key may be a secret of the app's).
 */
export function checkWellFormedId(value: string, name: string, path: ReadonlyArray<string | number> = [name]): void {
  const found = LONE_SURROGATE.exec(value);
  if (found === null) return;
  const unit = found[0].charCodeAt(0).toString(16).toUpperCase();
  invalidOption(
    name,
    `holds a lone UTF-16 surrogate (U+${unit} at index ${found.index}): as UTF-8 it becomes U+FFFD, so two ids would name one stored key. Pass well-formed text.`,
    path,
  );
}

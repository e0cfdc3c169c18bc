/**
 * Scope checks for the authorization URL, done before any URL is made so a typo fails loudly in development.
 */
import { ValidationError } from '../errors.js';
import { SCOPES, type Scope } from './types.js';

/**
 * Returns the scopes as given when each is one of the spec's five (section 5), none repeats and the list is
 * not empty; otherwise throws a `ValidationError` naming the bad value and its index.
 */
export function checkScopes(scopes: unknown): Scope[] {
  if (!Array.isArray(scopes)) {
    throw new ValidationError(`\`scopes\` must be an array of scope names, e.g. ['posts:read'].`, ['scopes']);
  }
  if (scopes.length === 0) {
    throw new ValidationError(`\`scopes\` is empty: ask for at least one of ${SCOPES.join(', ')}.`, ['scopes']);
  }
  const seen = new Set<string>();
  scopes.forEach((scope: unknown, index) => {
    if (typeof scope !== 'string') {
      throw new ValidationError(`\`scopes[${index}]\` must be a string, got ${typeof scope}.`, ['scopes', index]);
    }
    if (/\s/.test(scope) || scope === '') {
      // RFC 6749 §3.3: scope tokens are space-delimited, so one name cannot hold whitespace.
      throw new ValidationError(
        `\`scopes[${index}]\` is ${JSON.stringify(scope)}: a scope name cannot be empty or contain whitespace; ` +
          'pass each scope as its own array item.',
        ['scopes', index],
      );
    }
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new ValidationError(
        `\`scopes[${index}]\` is ${JSON.stringify(scope)}, which is not a scope of the service. ` +
          `Known scopes: ${SCOPES.join(', ')}.`,
        ['scopes', index],
      );
    }
    if (seen.has(scope)) {
      throw new ValidationError(`\`scopes[${index}]\` repeats ${JSON.stringify(scope)}; list each scope once.`, ['scopes', index]);
    }
    seen.add(scope);
  });
  return [...(scopes as Scope[])];
}

/**
 * Scope checks for the authorization URL, done before any URL is made so a typo fails loudly in development.
 */
import { invalidOption } from '../core/invalid-option.js';
import { SCOPES, type Scope } from './types.js';

/**
 * Returns the scopes as given when each is one of the spec's five (section 5), none repeats and the list is
 * not empty; otherwise throws a `ValidationError` naming the bad value and its index.
 */
export function checkScopes(scopes: unknown): Scope[] {
  if (!Array.isArray(scopes)) {
    invalidOption('scopes', "must be an array of scope names, e.g. ['posts:read'].");
  }
  if (scopes.length === 0) {
    invalidOption('scopes', `is empty: ask for at least one of ${SCOPES.join(', ')}.`);
  }
  const seen = new Set<string>();
  scopes.forEach((scope: unknown, index) => {
    if (typeof scope !== 'string') {
      invalidOption(`scopes[${index}]`, `must be a string, got ${typeof scope}.`, ['scopes', index]);
    }
    if (/\s/.test(scope) || scope === '') {
      // RFC 6749 §3.3: scope tokens are space-delimited, so one name cannot hold whitespace.
      invalidOption(`scopes[${index}]`, `is ${JSON.stringify(scope)}: no empty or whitespace names; one scope per item.`, ['scopes', index]);
    }
    if (!(SCOPES as readonly string[]).includes(scope)) {
      invalidOption(`scopes[${index}]`, `is ${JSON.stringify(scope)}: not a scope. Known: ${SCOPES.join(', ')}.`, ['scopes', index]);
    }
    if (seen.has(scope)) {
      invalidOption(`scopes[${index}]`, `repeats ${JSON.stringify(scope)}: list each scope once.`, ['scopes', index]);
    }
    seen.add(scope);
  });
  return [...(scopes as Scope[])];
}

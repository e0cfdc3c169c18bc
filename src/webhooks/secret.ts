/** Checks the webhook secret(s) before anything else: a configuration mistake must say so, not look like an attack. */
import { reject } from './errors.js';

/**
 * One webhook secret, or several while you rotate it: a delivery verifies if any one of them matches.
 *
 * @example
 * secret: [process.env.POSTSCHED_WEBHOOK_SECRET_NEW!, process.env.POSTSCHED_WEBHOOK_SECRET_OLD!]
 */
export type WebhookSecret = string | readonly string[];

/** The secrets as a list. Messages describe the problem, never the value. */
export function toSecretList(secret: unknown): readonly string[] {
  // An empty list has the fix of an empty secret: it is checked as one.
  const list: readonly unknown[] = Array.isArray(secret) ? (secret.length > 0 ? secret : ['']) : [secret];
  for (const item of list) {
    if (typeof item !== 'string' || item.trim() === '') {
      const problem = typeof item === 'string' ? 'empty' : 'not a string';
      reject('invalid_secret', `Secret is ${problem}: pass your endpoint's signing secret from the dashboard; is POSTSCHED_WEBHOOK_SECRET set?`);
    }
    if (item.trim() !== item) reject('invalid_secret', 'Secret has leading or trailing whitespace: trim it');
  }
  return list as readonly string[];
}

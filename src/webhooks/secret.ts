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
  const list: readonly unknown[] = Array.isArray(secret) ? secret : [secret];
  if (list.length === 0) reject('invalid_secret', 'Secret list is empty');
  for (const item of list) {
    if (typeof item !== 'string') reject('invalid_secret', 'Secret is not a string: is its environment variable set?');
    if (item.trim() === '') reject('invalid_secret', 'Secret is empty');
    if (item.trim() !== item) reject('invalid_secret', 'Secret has leading or trailing whitespace: trim it');
  }
  return list as readonly string[];
}

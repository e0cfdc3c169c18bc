/**
 * Checks the service's base URL once, at construction (OAuthClient and PostSched): HTTPS only, except loopback
 * for development and tests.
 */
import { invalidOption, invalidValue } from './invalid-option.js';

/** Hosts that may use plain `http:`: traffic to them never leaves the machine. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A validated base URL: `href` without a trailing slash, and whether it is plain-HTTP loopback. */
export interface CheckedBaseUrl {
  readonly href: string;
  readonly insecureLoopback: boolean;
}

/**
 * Tokens and the client secret travel to `{baseUrl}/oauth/token`, so anything but HTTPS would expose them
 * (RFC 6749 §3.2 requires TLS for the token endpoint). Loopback is the one exception.
 */
export function checkBaseUrl(value: unknown, option = 'baseUrl'): CheckedBaseUrl {
  if (typeof value !== 'string' && !(value instanceof URL)) {
    // An unset environment variable (`process.env.POSTSCHED_BASE_URL`) is the usual way to get here: say so.
    invalidValue(option, value, `${value === undefined ? ' (an unset environment variable?)' : ''}: it must be the service's base URL, such as "https://api.postsched.example".`);
  }
  const url = parseUrl(String(value));
  if (url === undefined) {
    invalidOption(option, `is not a valid absolute URL: "${String(value)}".`);
  }
  if (url.username !== '' || url.password !== '') {
    // The URL is echoed in messages below and in TSDoc examples; credentials do not belong in it.
    invalidOption(option, 'must not contain a user name or password.');
  }
  if (url.search !== '' || url.hash !== '') {
    invalidOption(option, `must not have a query or fragment: "${url.href}".`);
  }
  const insecureLoopback = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !insecureLoopback) {
    invalidOption(option, `must use https: "${url.href}". Plain http only for http://localhost, 127.0.0.1, [::1] (dev, tests).`);
  }
  return { href: url.href.replace(/\/+$/, ''), insecureLoopback };
}

/** `URL.parse` only arrived in Node 22; the SDK supports Node 20. */
function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

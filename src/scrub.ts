/**
 * The fence for text the SDK quotes from outside (a server's error text, a Location header, a runtime's error
 * message) before it goes into an error message or a log line: every secret the SDK knows for the call is cut
 * out, anything shaped like a credential is redacted, and control characters are escaped, so a hostile server
 * can neither echo a token back into `error.message` nor forge log lines with CR/LF or terminal escapes.
 */
import { redact } from './http/logger.js';

/** Shorter values are not cut out: they would match ordinary words (the credential patterns still apply). */
const MIN_SECRET_LENGTH = 4;

/**
 * `text` without the `secrets` (each replaced by `[redacted]`), credential-shaped parts redacted, and control
 * characters written as escapes (`\n`, `\u001b`).
 *
 * @example
 * scrub('bad token tok_123\n', ['tok_123']) // 'bad token [redacted]\\n'
 */
export function scrub(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  return escapeControl(redact(scrubSecrets(text, secrets)));
}

// C0 controls, DEL, C1 controls and the Unicode line/paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with its control characters written as escapes (`\n`, `\u001b`), so that a terminal or a log shows them
 * instead of acting on them (screen clears, OSC 52 clipboard writes, forged lines).
 *
 * @example
 * escapeControl('ok\u001b[2J') // 'ok\\u001b[2J'
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `value` with every string inside it scrubbed (objects and arrays copied, other values kept). */
export function scrubValue(value: unknown, secrets: ReadonlyArray<string | undefined>, depth = 0): unknown {
  if (typeof value === 'string') return scrubSecrets(value, secrets);
  if (typeof value !== 'object' || value === null || depth > 32) return value;
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, secrets, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = scrubValue(item, secrets, depth + 1);
  return copy;
}

/** Only the known secrets cut out: for data kept as received (`error.body`), where escaping would change it. */
export function scrubSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= MIN_SECRET_LENGTH && out.includes(secret)) out = out.split(secret).join('[redacted]');
  }
  return out;
}

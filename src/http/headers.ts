/**
 * Headers from the caller (the client's `headers`, a call's `headers` and `idempotencyKey`), checked before
 * anything is sent. The runtime refuses a CR, LF or NUL in a value (header injection) with a TypeError that
 * quotes the value, which may be a secret: here the error is a `ValidationError` naming the option and the
 * header, never the value.
 */
import { ValidationError } from '../core/errors.js';
import { refusal } from '../core/invalid-option.js';
import type { HeadersInput } from './options.js';

/** `new Headers(init)`, or a `ValidationError` naming `option` and the bad header. */
export function checkedHeaders(init: HeadersInput | undefined, option: string): Headers {
  try {
    return new Headers(init);
  } catch {
    throw invalidHeader(option, badHeaderName(init));
  }
}

/** `headers.set(name, value)` for a value given as the option `option` (`idempotencyKey`). */
export function setChecked(headers: Headers, name: string, value: unknown, option: string): void {
  if (typeof value !== 'string' || value === '') {
    throw refusal(`\`${option}\` must be a non-empty string.`, [option]);
  }
  try {
    headers.set(name, value);
  } catch {
    throw invalidHeader(option, undefined);
  }
}

function invalidHeader(option: string, name: string | undefined): ValidationError {
  const which = name === undefined ? '' : ` (header "${name.slice(0, 100).replace(/[^\x21-\x7e]/g, '?')}")`;
  return refusal(
    // A CR or LF in a value would start a header of its own (header injection).
    `\`${option}\`${which} cannot be sent: a header name must be an HTTP token, a value free of CR, LF and NUL. Remove them.`,
    [option],
  );
}

/** The first entry `new Headers` refuses, found entry by entry (the value itself is never reported). */
function badHeaderName(init: HeadersInput | undefined): string | undefined {
  let entries: Iterable<readonly [string, string]> | undefined;
  if (Array.isArray(init)) entries = init as Array<[string, string]>;
  else if (typeof init === 'object' && init !== null && !(init instanceof Headers)) entries = Object.entries(init as Record<string, string>);
  for (const [name, value] of entries ?? []) {
    try {
      new Headers([[name, value]]);
    } catch {
      return String(name);
    }
  }
  return undefined;
}

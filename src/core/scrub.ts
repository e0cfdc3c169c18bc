/**
 * The one secrets module: every text, value, header and error the SDK takes from outside (a server's answer, a
 * runtime's or a store's error) passes through here before it reaches an error, a log line, a hook or `cause`.
 * - the secrets the SDK knows for the call (tokens, the client secret, the code, the verifier) are cut out;
 * - anything shaped like a credential is redacted (`Bearer …`, `access_token=…`, JSON token fields, and for a token
 *   store's messages, TokenSet fields and opaque token-like runs);
 * - control characters are escaped, so a hostile server can neither echo a token back into `error.message` nor
 *   forge log lines with CR/LF or terminal escapes;
 * - a runtime's error is never attached, only a copy of its chain (its original may reference the request, whose
 *   headers or body hold the token, the client secret, the code or the verifier).
 */

/** Shorter values are not cut out: they would match ordinary words (the credential patterns still apply). */
const MIN_SECRET_LENGTH = 4;

type Secrets = ReadonlyArray<string | undefined>;

/**
 * `text` without the `secrets` (each replaced by `[redacted]`), credential-shaped parts redacted, and control
 * characters written as escapes (`\n`, `\u001b`).
 *
 * @example
 * scrub('bad token tok_123\n', ['tok_123']) // 'bad token [redacted]\\n'
 */
export function scrub(text: string, secrets: Secrets = []): string {
  return escapeControl(redact(scrubSecrets(text, secrets)));
}

/** Only the known secrets cut out: for data kept as received (`error.body`), where escaping would change it. */
export function scrubSecrets(text: string, secrets: Secrets): string {
  let out = text;
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= MIN_SECRET_LENGTH && out.includes(secret)) out = out.split(secret).join('[redacted]');
  }
  return out;
}

/** `value` with every string inside it scrubbed of `secrets` (objects and arrays copied, other values kept). */
export function scrubValue(value: unknown, secrets: Secrets, depth = 0): unknown {
  if (typeof value === 'string') return scrubSecrets(value, secrets);
  if (typeof value !== 'object' || value === null || depth > 32) return value;
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, secrets, depth + 1));
  // fromEntries defines each key as a field: a `"__proto__"` key of a JSON answer stays one, not the copy's prototype.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrubValue(item, secrets, depth + 1)]));
}

/** `headers` itself when no value holds a secret, else a copy with the secrets cut out. */
export function scrubHeaders(headers: Headers, secrets: Secrets): Headers {
  let dirty = false;
  headers.forEach((value) => (dirty ||= scrubSecrets(value, secrets) !== value));
  if (!dirty) return headers;
  const copy = new Headers();
  headers.forEach((value, name) => copy.append(name, scrubSecrets(value, secrets)));
  return copy;
}

const REDACTIONS: ReadonlyArray<[RegExp, string]> = [
  [/\b(bearer|basic)\s+[^\s,;"']+/gi, '$1 [redacted]'],
  [/\b(access_token|refresh_token|id_token|client_secret|code_verifier|code|token|secret|password)=[^&\s"']+/gi, '$1=[redacted]'],
  [/("(?:access_token|refresh_token|id_token|client_secret|code_verifier|token|secret|password)"\s*:\s*)"[^"]*"/gi, '$1"[redacted]"'],
];

/**
 * Removes anything shaped like a credential from free text (`Bearer …`, `access_token=…`, JSON token fields).
 *
 * @example
 * redact('Authorization: Bearer abc.def') // 'Authorization: Bearer [redacted]'
 */
export function redact(text: string): string {
  return REDACTIONS.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement), text);
}

/** `"accessToken": "…"`, `refreshToken=…`: the TokenSet's field names, as a store may serialize them (or quote them cut short). */
const TOKEN_FIELDS = /("?(?:accessToken|refreshToken)"?\s*[:=]\s*)("[^"]*"?|[^\s,;&"'}]+)/gi;
/** A run of 20+ token characters holding a digit: what an opaque token looks like, and few words do. */
const OPAQUE = /(?=[\w~+/.=-]*\d)[\w~+/.=-]{20,}/g;

/**
 * A token store's message, which may echo the tokens it was handed or holds, including ones the SDK has not seen
 * yet (a failed first read or lock): the known values first, then TokenSet fields, then anything token-shaped; what
 * is left (`connect ECONNREFUSED 127.0.0.1:6379`) still says what went wrong.
 */
export function scrubStoreMessage(text: string, known: Secrets): string {
  return scrub(scrubSecrets(text, known).replace(TOKEN_FIELDS, '$1"[redacted]"').replace(OPAQUE, '[redacted]'));
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

// ---------------------------------------------------------------------------------------------------------------
// A runtime's network error (the API attempts in src/http, the token requests in src/oauth): a custom fetch may
// attach `init` or the Request to its error, so only a copy of its chain is kept.

/** "TypeError ECONNREFUSED": the error's name and code, for log lines. */
export function errorName(error: unknown): string {
  if (!(error instanceof Error)) return 'error';
  const code = findCode(error);
  return code === undefined ? error.name : `${error.name} ${code}`;
}

/** The innermost message (fetch's own is only "fetch failed"), scrubbed, with the code when there is one. */
export function describeNetworkError(error: Error, secrets: Secrets = []): string {
  let innermost: Error = error;
  for (let depth = 0; innermost.cause instanceof Error && depth < 8; depth++) innermost = innermost.cause;
  const message = scrub(String(innermost.message), secrets);
  const code = findCode(error);
  return code === undefined || message.includes(code) ? message : `${message} (${code})`;
}

/** The first `code` in the cause chain (`ECONNREFUSED`, `UND_ERR_SOCKET` …; an AggregateError's from its first error). */
export function findCode(error: unknown): string | undefined {
  return walkCauses(error, (code) => (typeof code === 'string' ? code : undefined), ([first]) => first);
}

/**
 * Error codes of Node / undici proving the request was never sent: no connection opened (refused, no address, no
 * route, connect time-out, a TLS certificate refused before any byte of the request). A reset is not one of them.
 */
const NEVER_SENT_CODES = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * True when the cause chain of a connection failure holds a code proving that nothing was sent
 * (NEVER_SENT_CODES). Walks `cause` and `AggregateError.errors` (happy eyeballs).
 */
export function requestNeverLeft(error: unknown): boolean {
  const neverSent = (code: unknown) => (typeof code === 'string' && NEVER_SENT_CODES.has(code)) || undefined;
  return walkCauses(error, neverSent, (answers) => answers.every(Boolean) || undefined) === true;
}

/**
 * The one walk of an error's cause chain, at most 8 links deep: `at` reads each link's `code` and answers, or says
 * `undefined` to go on; an `AggregateError`'s `errors` (happy eyeballs: one per address) are walked each, and `all`
 * makes their answers one (or `undefined`: go on to `cause`).
 */
export function walkCauses<T>(error: unknown, at: (code: unknown) => T | undefined, all: (answers: Array<T | undefined>) => T | undefined, depth = 0): T | undefined {
  if (typeof error !== 'object' || error === null || depth > 8) return undefined;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  const answer = at(code) ?? (Array.isArray(errors) && errors.length > 0 ? all(errors.map((e) => walkCauses(e, at, all, depth + 1))) : undefined);
  return answer ?? walkCauses(cause, at, all, depth + 1);
}

/**
 * A copy of an error's chain keeping only name, message and stack (scrubbed), `code`, `syscall` and `errno`: the
 * original may reference the request, whose headers hold the access token, or (a Redis client's) the command.
 * `clean`: how texts are scrubbed; `scrubStoreMessage` for a token store's client, whose server may echo the tokens.
 */
export function sanitizeCause(error: unknown, depth = 0, secrets: Secrets = [], clean: (text: string, secrets: Secrets) => string = scrub): Error | undefined {
  if (!(error instanceof Error) || depth > 8) return undefined;
  const nested = Array.isArray((error as { errors?: unknown }).errors)
    ? ((error as AggregateError).errors.map((e) => sanitizeCause(e, depth + 1, secrets, clean)).filter((e) => e !== undefined) as Error[])
    : undefined;
  const cause = sanitizeCause(error.cause, depth + 1, secrets, clean);
  const copy =
    nested === undefined
      ? new Error(clean(String(error.message), secrets), cause === undefined ? {} : { cause })
      : new AggregateError(nested, clean(String(error.message), secrets), cause === undefined ? {} : { cause });
  Object.defineProperty(copy, 'name', { value: clean(String(error.name), secrets), enumerable: false, configurable: true, writable: true });
  if (typeof error.stack === 'string') copy.stack = clean(error.stack, secrets);
  for (const key of ['code', 'syscall', 'errno'] as const) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (typeof value === 'number' || (typeof value === 'string' && value.length <= 64)) Object.assign(copy, { [key]: typeof value === 'string' ? clean(value, secrets) : value });
  }
  return copy;
}

/**
 * Errors of the OAuth helper and the token manager. None of them ever holds the client secret, an
 * authorization code, a PKCE verifier or a token: not in the message, not in a property, not in `cause`
 * (oauth4webapi's own errors carry the callback parameters or the token response body in `cause`, so they
 * are mapped to these classes and never attached).
 * Their fields are `declare`d and set by the constructors, in the order declared: no field initializer is emitted.
 */
import { PostSchedError } from '../core/base-error.js';
import { scrub as scrubText, scrubStoreMessage } from '../core/scrub.js';

/**
 * The authorization server answered with an OAuth 2.0 error: an error redirect to the callback
 * (RFC 6749 §4.1.2.1) or an error body from the token endpoint (RFC 6749 §5.2).
 *
 * @example
 * try { await oauth.exchangeCode(callbackUrl, pending) } catch (err) {
 *   if (err instanceof OAuthError && err.error === 'access_denied') return res.send('You declined.')
 *   throw err
 * }
 */
export class OAuthError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'OAuthError';
  /** The RFC 6749 error code, e.g. `access_denied`, `invalid_grant`, `invalid_client`. */
  declare readonly error: string;
  /** The server's human-readable explanation, when it gave one. */
  declare readonly error_description: string | undefined;
  /** A page about the error, when the server gave one. */
  declare readonly error_uri: string | undefined;
  /** HTTP status of the token endpoint's answer; `undefined` for an error redirect. */
  declare readonly status: number | undefined;

  constructor(
    details: { error: string; error_description?: string | undefined; error_uri?: string | undefined; status?: number | undefined },
    message?: string,
  ) {
    super(message ?? describe(details));
    this.error = details.error;
    this.error_description = details.error_description;
    this.error_uri = details.error_uri;
    this.status = details.status;
  }

  /** The machine-readable field under the name every SDK error uses for it: the same value as `error`. */
  get code(): string {
    return this.error;
  }
}

/** Why the user has to go through the authorization flow again. */
export type ReauthorizationReason =
  /** The token endpoint refused the refresh token (RFC 6749 §5.2): expired, revoked or already rotated. */
  | 'invalid_grant'
  /** The token store holds no tokens yet: run the authorization flow and call `setTokens` (`users.connect` for a `UserClients` user). */
  | 'no_tokens'
  /** The access token expired and the service never issued a refresh token. */
  | 'no_refresh_token'
  /**
   * A refresh got no answer after it left (reset, time-out): the service may have rotated the refresh token with the
   * answer lost. It was sent again at once with the same token, and refused: the newest token never arrived.
   */
  | 'refresh_outcome_unknown';

/**
 * The tokens cannot be renewed without the user: send them through the authorization flow again.
 * Thrown by the token manager (and by `OAuthClient.refresh` on `invalid_grant`). The stored tokens are
 * left as they are; nothing is deleted.
 *
 * @example
 * try { await manager.getAccessToken() } catch (err) {
 *   if (err instanceof ReauthorizationRequiredError) return redirectToLogin()
 *   throw err
 * }
 */
export class ReauthorizationRequiredError extends OAuthError {
  /** @internal */
  static override readonly id: string = 'ReauthorizationRequiredError';
  /** Why the user must authorize again. */
  declare readonly reason: ReauthorizationReason;

  constructor(
    reason: ReauthorizationReason,
    details: {
      error_description?: string | undefined;
      error_uri?: string | undefined;
      status?: number | undefined;
      /** @internal The tokens are a `UserClients` user's: the message names `users.connect()`, not `setTokens()`. */
      userClients?: boolean | undefined;
    } = {},
  ) {
    const { userClients, ...fields } = details;
    super({ ...fields, error: reason }, REAUTHORIZATION_MESSAGES[reason](details.error_description, userClients === true));
    this.reason = reason;
  }

  /** The same value as `reason`. */
  override get code(): ReauthorizationReason {
    return this.reason;
  }
}

const REAUTHORIZATION_MESSAGES: Record<ReauthorizationReason, (description: string | undefined, userClients: boolean) => string> = {
  invalid_grant: (description) =>
    `The token endpoint refused the refresh token (invalid_grant)${description === undefined ? '.' : `: ${sentence(scrubText(description))}`} ` +
    'The user must authorize the app again.',
  no_tokens: (_, userClients) =>
    `No tokens are stored yet: authorize the user, then pass the TokenSet from \`oauth.exchangeCode()\` to \`${userClients ? 'users.connect(userId, tokens)' : 'manager.setTokens(tokens)'}\`.`,
  no_refresh_token: () =>
    'The access token expired and there is no refresh token to renew it. The user must authorize the app again.',
  refresh_outcome_unknown: () =>
    'A token refresh got no answer (the service may have rotated the refresh token), and the same token sent again was refused. ' +
    'The user must authorize the app again.',
};

/** What went wrong with the callback, as a machine-readable code. */
export type OAuthCallbackErrorCode =
  /** The callback's `state` differs from the one sent: possible CSRF, or a stale tab (RFC 6749 §10.12). */
  | 'state_mismatch'
  /** The callback has no `state` at all. */
  | 'missing_state'
  /** The callback's `iss` names another authorization server (RFC 9207 §2.4: mix-up attack). */
  | 'issuer_mismatch'
  /** The callback has neither `code` nor `error`. */
  | 'missing_code'
  /** The callback is not a URL, or is a response shape this SDK does not support (JARM, implicit). */
  | 'invalid_callback';

/**
 * The callback to `redirect_uri` failed a security check before any token request was sent.
 * Do not retry with the same callback: start a new authorization.
 *
 * @example
 * catch (err) { if (err instanceof OAuthCallbackError && err.code === 'state_mismatch') return res.status(400).end() }
 */
export class OAuthCallbackError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'OAuthCallbackError';
  /** Which check failed. */
  declare readonly code: OAuthCallbackErrorCode;

  constructor(code: OAuthCallbackErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** What was wrong with the token endpoint's answer, as a machine-readable code. */
export type OAuthResponseErrorCode =
  /** An HTTP status that is neither 200 nor an RFC 6749 §5.2 error (e.g. an HTML 500 page). */
  | 'unexpected_status'
  /** The body is not JSON. */
  | 'not_json'
  /** JSON, but not an RFC 6749 §5.1 token response (e.g. no `access_token`). */
  | 'invalid_body'
  /** `token_type` is not `bearer` (RFC 6750). */
  | 'unsupported_token_type';

/**
 * The token endpoint answered something that is not a usable OAuth response. It carries the HTTP status
 * but never the body, which may hold tokens.
 *
 * @example
 * catch (err) { if (err instanceof OAuthResponseError) console.error(err.code, err.status) }
 */
export class OAuthResponseError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'OAuthResponseError';
  /** What was wrong with the answer. */
  declare readonly code: OAuthResponseErrorCode;
  /** The HTTP status of the token endpoint's answer. */
  declare readonly status: number;

  constructor(code: OAuthResponseErrorCode, status: number, message: string) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

function describe(details: { error: string; error_description?: string | undefined; status?: number | undefined }): string {
  const where = details.status === undefined ? 'The authorization server' : `The token endpoint (HTTP ${details.status})`;
  const description = details.error_description === undefined ? '.' : `: ${sentence(scrubText(details.error_description))}`;
  return `${where} answered with the OAuth error "${scrubText(details.error)}"${description}`;
}

/** `text` ending in exactly one full stop (or its own `!`/`?`): a server's description may or may not end in one. */
export function sentence(text: string): string {
  const trimmed = text.trimEnd();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** Which call to the token store (or the `onTokens` callback) failed; `unlock` is `RedisTokenStore`'s own. */
export type TokenStoreOperation = 'get' | 'set' | 'lock' | 'unlock' | 'onTokens';

/**
 * The token store or the `onTokens` callback failed: every store failure is one, the Redis and PostgreSQL stores'
 * own errors (`SharedTokenStoreError`, with a `code`) included. The original error is described in the message (with any
 * token value the SDK knows replaced by `[redacted]`) but not attached: store clients (Redis, SQL) often keep the
 * failed command, with the tokens in it, on their errors.
 * After a failed `set` / `onTokens`, the manager keeps the new tokens in memory and saves them again before
 * handing any of them out.
 *
 * @example
 * catch (err) { if (err instanceof TokenStoreError) console.error(err.operation, err.message) }
 */
export class TokenStoreError extends PostSchedError {
  /** @internal */
  static override readonly id: string = 'TokenStoreError';
  /** The store method (or `onTokens`) that failed. */
  declare readonly operation: TokenStoreOperation;

  /**
   * `knownSecrets`: the token values at hand, scrubbed from the original message in case it echoes them.
   * `message` and `options`: a store's own subclass (`SharedTokenStoreError`) says what failed itself.
   */
  constructor(
    operation: TokenStoreOperation,
    original: unknown,
    knownSecrets: readonly string[] = [],
    message: string = describeStoreFailure(operation, original, knownSecrets),
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.operation = operation;
  }
}

function describeStoreFailure(operation: TokenStoreOperation, original: unknown, knownSecrets: readonly string[]): string {
  const what = operation === 'onTokens' ? 'The onTokens callback' : `The token store's ${operation}()`;
  const detail = original instanceof Error ? scrubStoreMessage(`${original.name}: ${original.message}`, knownSecrets) : typeof original;
  return `${what} failed (${detail.slice(0, 300)}).`;
}

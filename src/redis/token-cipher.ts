/**
 * Encryption at rest for stored tokens: AES-256-GCM through Web Crypto (`crypto.subtle`), so this file runs
 * on any runtime. A refresh token is a password; whoever can read Redis (a backup, a replica, a shared
 * instance) should not be able to use it.
 *
 * Envelope (a string, so it never parses as a token set): `enc:v1:<base64url IV>:<base64url ciphertext+tag>`.
 * - IV: 96 random bits per write (NIST SP 800-38D §8.2.2 random construction; the recommended GCM IV length).
 * - AAD: the Redis key, so a value copied under another user's key fails to decrypt instead of logging that
 *   user in as someone else.
 */
import { ValidationError } from '../errors.js';
import { StoredTokensUnreadableError } from './errors.js';

const PREFIX = 'enc:';
const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;

/** Whether a stored value is an encrypted envelope (of any version). */
export function isEnvelope(value: string): boolean {
  return value.startsWith(PREFIX);
}

/** Seals and opens token JSON with one AES-256-GCM key. The key stays inside a non-extractable CryptoKey. */
export class TokenCipher {
  readonly #key: Promise<CryptoKey>;

  /** @param encryptionKey 32 raw bytes, or their base64 / base64url text. Checked here, synchronously. */
  constructor(encryptionKey: unknown) {
    const raw = parseEncryptionKey(encryptionKey);
    this.#key = crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
    this.#key.catch(() => {}); // surfaced by seal/open; never an unhandled rejection
  }

  async seal(plaintext: string, redisKey: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const sealed = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: utf8(redisKey) },
      await this.#key,
      utf8(plaintext),
    );
    return `${PREFIX}${VERSION}:${toBase64Url(iv)}:${toBase64Url(new Uint8Array(sealed))}`;
  }

  /** Opens an envelope; anything wrong (version, shape, key, tag) is a `StoredTokensUnreadableError`. */
  async open(envelope: string, redisKey: string): Promise<string> {
    const [version, ivText, sealedText, ...rest] = envelope.slice(PREFIX.length).split(':');
    if (version !== VERSION) throw new StoredTokensUnreadableError(redisKey, 'unsupported_version');
    const iv = ivText === undefined ? undefined : fromBase64(ivText);
    const sealed = sealedText === undefined ? undefined : fromBase64(sealedText);
    if (iv?.length !== IV_BYTES || sealed === undefined || rest.length > 0) {
      throw new StoredTokensUnreadableError(redisKey, 'malformed', 'bad encrypted envelope');
    }
    let plaintext: ArrayBuffer;
    try {
      plaintext = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv, additionalData: utf8(redisKey) },
        await this.#key,
        sealed,
      );
    } catch {
      // Web Crypto reports a failed tag check as a bare OperationError: nothing to keep as `cause`.
      throw new StoredTokensUnreadableError(redisKey, 'wrong_key_or_tampered');
    }
    return new TextDecoder().decode(plaintext);
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'TokenCipher { AES-256-GCM, key: [redacted] }';
  }

  toJSON(): string {
    return '[TokenCipher]';
  }
}

/**
 * Checks and decodes `encryptionKey`: a `Uint8Array` (a Node `Buffer` is one) of 32 bytes, or the base64 /
 * base64url text of 32 bytes (`openssl rand -base64 32`). Errors say what was wrong, never the key.
 */
export function parseEncryptionKey(input: unknown): Uint8Array<ArrayBuffer> {
  const fix = 'Generate one with `openssl rand -base64 32` and keep it in your secret store.';
  if (input instanceof Uint8Array) {
    if (input.length !== KEY_BYTES) {
      throw new ValidationError(`\`encryptionKey\` must be ${KEY_BYTES} bytes (AES-256); got ${input.length} bytes. ${fix}`, ['encryptionKey']);
    }
    return new Uint8Array(input); // a copy: the caller may reuse or zero their buffer
  }
  if (typeof input === 'string') {
    const bytes = fromBase64(input.trim());
    if (bytes === undefined) {
      throw new ValidationError(`\`encryptionKey\` is a string but not base64 or base64url. ${fix}`, ['encryptionKey']);
    }
    if (bytes.length !== KEY_BYTES) {
      throw new ValidationError(
        `\`encryptionKey\` must decode to ${KEY_BYTES} bytes (AES-256); this base64 text decodes to ${bytes.length} bytes. ${fix}`,
        ['encryptionKey'],
      );
    }
    return bytes;
  }
  throw new ValidationError(
    `\`encryptionKey\` must be a Uint8Array of ${KEY_BYTES} bytes or its base64 text; got ${input === null ? 'null' : typeof input}. ${fix}`,
    ['encryptionKey'],
  );
}

function utf8(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text);
}

// Base64 by hand with btoa/atob: `Buffer` is Node-only and Uint8Array.fromBase64 is not in Node 20.
function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** Standard or URL alphabet, padded or not; `undefined` when the text is not base64. */
function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text) || text.replace(/=+$/, '').length % 4 === 1) return undefined;
  const standard = text.replaceAll('-', '+').replaceAll('_', '/').replace(/=+$/, '');
  const binary = atob(standard.padEnd(Math.ceil(standard.length / 4) * 4, '='));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

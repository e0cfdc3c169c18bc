/**
 * Encryption at rest for stored tokens: AES-256-GCM through Web Crypto (`crypto.subtle`), so this file runs
 * on any runtime. A refresh token is a password; whoever can read the store (a backup, a replica, a shared
 * instance) should not be able to use it. Every encrypting store (Redis, Postgres) seals through this one class.
 *
 * Envelopes (strings, so they never parse as a token set):
 * - `enc:v1:<base64url IV>:<base64url ciphertext+tag>`: written with one key (`encryptionKey` a key), as every
 *   version before keyrings wrote it, so processes of an older version sharing the store still read it.
 * - `enc:v2:<key id>:<base64url IV>:<base64url ciphertext+tag>`: written with a keyring's `current` key. The id
 *   picks the key that opens it; a v1 value, or a v2 one naming a key the keyring does not list, is tried with
 *   every listed key (the GCM tag tells the right one), so a keyring listing today's key reads today's values.
 * - IV: 96 random bits per write (NIST SP 800-38D §8.2.2 random construction; the recommended GCM IV length).
 * - AAD: the value's key in the store (the Redis key, the row's key), so a value copied under another user's key
 *   fails to decrypt instead of logging that user in as someone else.
 */
import { fromBase64, toBase64Url } from '../core/bytes.js';
import { checkOptions, invalidOption, optionNames } from '../core/invalid-option.js';
import { UnreadableValue } from './errors.js';

const PREFIX = 'enc:';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const KEY_ID = /^[A-Za-z0-9._-]{1,32}$/;

/**
 * Several keys, for rotating the one that encrypts stored tokens: values are written with `current`, and read
 * with whichever listed key they were written with. Ids are short names (1–32 characters: letters, digits, `.`,
 * `_`, `-`), written beside each value; keys are 32 bytes or their base64 text, as a single `encryptionKey`.
 *
 * @example
 * encryptionKey: { current: 'k2', keys: { k1: process.env.TOKEN_KEY_1!, k2: process.env.TOKEN_KEY_2! } }
 */
export interface EncryptionKeyring {
  /**
   * The id of the key new values are written with; one of `keys`. `'none'` (with `allowPlaintext: true`) writes in
   * clear: the first step of a move from `encryptionKey: 'none'`, while some processes cannot read a key yet.
   */
  current: string;
  /** Every key a stored value may have been written with, by id (`none` is reserved). */
  keys: Record<string, Uint8Array | string>;
  /**
   * `true` only while moving a store from `encryptionKey: 'none'` to a key: values stored in clear are then read, and
   * `rotateTokenEncryption` / `postsched rekey` encrypt them under `current`. Without it (the default) a value in
   * clear is refused (`SharedTokenStoreError` `unreadable`, problem `not_encrypted`), so that someone who can write to the
   * store cannot plant tokens. The move, each step deployed to every process before the next, traffic going on:
   * 1. `{ current: 'none', keys: { k1 }, allowPlaintext: true }`: every process reads k1, still writes in clear;
   * 2. `{ current: 'k1', keys: { k1 }, allowPlaintext: true }`: every process writes k1;
   * 3. `postsched rekey` (with step 2's keyring) encrypts the values still in clear; it exits 0 when none is left;
   * 4. `{ current: 'k1', keys: { k1 } }` (or `encryptionKey: k1`): values in clear are refused from now on.
   */
  allowPlaintext?: boolean;
}

const KEYRING = optionNames<EncryptionKeyring>({ current: 0, keys: 0, allowPlaintext: 0 });

/** An `encryptionKey` option: one key (32 bytes, or their base64 / base64url text) or a keyring. */
export type EncryptionKey = Uint8Array | string | EncryptionKeyring;

/** The `encryptionKey` of a store that keeps tokens in clear: the app's explicit choice, never a default. */
export const NO_ENCRYPTION = 'none';

const FIX = 'Generate one with `openssl rand -base64 32` and keep it in your secret store.';

/**
 * The cipher of a store's `encryptionKey` (`undefined`: `'none'`, values in clear). A missing key is refused: an
 * unset environment variable would otherwise keep every user's refresh token in clear without a word.
 */
export function storeCipher(encryptionKey: unknown): TokenCipher | undefined {
  if (encryptionKey === NO_ENCRYPTION) return undefined;
  if (encryptionKey === undefined) {
    invalidOption(
      'encryptionKey',
      'is undefined: the store needs a key to encrypt the tokens it keeps. Likely cause: an unset environment variable ' +
        '(TOKEN_ENCRYPTION_KEY in `encryptionKey: process.env.TOKEN_ENCRYPTION_KEY`?). ' +
        `${FIX} To keep tokens in clear, say so: \`encryptionKey: '${NO_ENCRYPTION}'\`.`,
    );
  }
  return new TokenCipher(encryptionKey);
}

/** Whether a stored value is an encrypted envelope (of any version). */
export function isEnvelope(value: string): boolean {
  return value.startsWith(PREFIX);
}

/** Seals and opens token JSON with AES-256-GCM keys. The keys stay inside non-extractable CryptoKeys. */
export class TokenCipher {
  /** Keys by id; a single key (not a keyring) has the id `undefined`. */
  readonly #keys: Map<string | undefined, Promise<CryptoKey>>;
  /** The id of the key values are written with (`undefined`: one key, v1 envelopes). */
  readonly #current: string | undefined;
  /** The keyring's `allowPlaintext`: values in clear are read (a move from `'none'` under way). */
  readonly allowsPlaintext: boolean;

  /** @param encryptionKey One key (32 raw bytes, or their base64 / base64url text) or a keyring. Checked here, synchronously. */
  constructor(encryptionKey: unknown) {
    const { current, keys, allowPlaintext } = parseEncryptionKeys(encryptionKey);
    this.#current = current;
    this.allowsPlaintext = allowPlaintext;
    this.#keys = new Map(
      [...keys].map(([id, raw]) => {
        const key = crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
        key.catch(() => {}); // surfaced by seal/open; never an unhandled rejection
        return [id, key];
      }),
    );
  }

  /** Whether new values are written in clear (`current: 'none'`, the first step of a move to a key). */
  get writesPlaintext(): boolean {
    return this.#current === NO_ENCRYPTION;
  }

  async seal(plaintext: string, storeKey: string): Promise<string> {
    if (this.#current === NO_ENCRYPTION) return plaintext;
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const sealed = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: utf8(storeKey) },
      await this.#keys.get(this.#current)!,
      utf8(plaintext),
    );
    const head = this.#current === undefined ? 'v1' : `v2:${this.#current}`;
    return `${PREFIX}${head}:${toBase64Url(iv)}:${toBase64Url(new Uint8Array(sealed))}`;
  }

  /** Opens an envelope; anything wrong (version, shape, key, tag) is an `UnreadableValue`. */
  async open(envelope: string, storeKey: string): Promise<string> {
    const parts = envelope.slice(PREFIX.length).split(':');
    const version = parts[0];
    if (version !== 'v1' && version !== 'v2') throw new UnreadableValue('unsupported_version');
    const keyId = version === 'v2' ? parts[1] : undefined;
    const [ivText, sealedText, ...rest] = parts.slice(version === 'v2' ? 2 : 1);
    const iv = ivText === undefined ? undefined : fromBase64(ivText);
    const sealed = sealedText === undefined ? undefined : fromBase64(sealedText);
    if (iv?.length !== IV_BYTES || sealed === undefined || rest.length > 0 || (version === 'v2' && !KEY_ID.test(keyId ?? ''))) {
      throw new UnreadableValue('malformed', 'bad encrypted envelope');
    }
    const named = this.#keys.get(keyId);
    for (const key of named === undefined ? this.#keys.values() : [named]) {
      try {
        const plaintext = await crypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData: utf8(storeKey) }, await key, sealed);
        return new TextDecoder().decode(plaintext);
      } catch {
        // Web Crypto reports a failed tag check as a bare OperationError: try the next key, or fail below.
      }
    }
    const unlisted = keyId !== undefined && named === undefined;
    throw new UnreadableValue('wrong_key_or_tampered', unlisted ? `written with key id "${keyId}", which \`encryptionKey\` does not list` : undefined);
  }

  /** Whether an envelope was written with the key values are written with now (no need to re-encrypt it). */
  isCurrent(envelope: string): boolean {
    const current = this.#current === undefined ? 'v1:' : `v2:${this.#current}:`;
    return envelope.startsWith(`${PREFIX}${current}`);
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `TokenCipher { AES-256-GCM, ${this.#current === undefined ? 'key' : `current: ${this.#current}, keys`}: [redacted] }`;
  }

  toJSON(): string {
    return '[TokenCipher]';
  }
}

/**
 * Checks and decodes `encryptionKey`: one key, or a keyring `{ current, keys }` whose `current` it lists. A key is a
 * `Uint8Array` (a Node `Buffer` is one) of 32 bytes, or the base64 / base64url text of 32 bytes (`openssl rand
 * -base64 32`). Errors say what was wrong, never a key (nor an id that is not one, which may be a key pasted there).
 */
export function parseEncryptionKeys(input: unknown): {
  current: string | undefined;
  keys: Map<string | undefined, Uint8Array<ArrayBuffer>>;
  allowPlaintext: boolean;
} {
  // Bytes of another kind (a Float32Array, an ArrayBuffer, an array) are a key given wrong, not a keyring.
  if (typeof input !== 'object' || input === null || input instanceof Uint8Array || ArrayBuffer.isView(input) || input instanceof ArrayBuffer || Array.isArray(input)) {
    return { current: undefined, keys: new Map([[undefined, parseKey(input, 'encryptionKey')]]), allowPlaintext: false };
  }
  const { current, keys, allowPlaintext = false } = checkOptions(input as Partial<EncryptionKeyring>, KEYRING, 'a keyring (`encryptionKey`)');
  if (typeof allowPlaintext !== 'boolean') invalidOption('encryptionKey.allowPlaintext', 'must be true (while moving from `encryptionKey: \'none\'` to a key) or false.', ['encryptionKey', 'allowPlaintext']);
  if (typeof keys !== 'object' || keys === null || Object.keys(keys).length === 0) {
    invalidOption('encryptionKey', "must be one key (32 bytes or their base64 text) or a keyring { current: 'k2', keys: { k1: …, k2: … } }; this object lists no `keys`.", ['encryptionKey', 'keys']);
  }
  const parsed = new Map<string | undefined, Uint8Array<ArrayBuffer>>();
  for (const [id, key] of Object.entries(keys)) {
    if (!KEY_ID.test(id)) {
      invalidOption('encryptionKey.keys', `holds a key id of ${id.length} characters: ids are 1–32 letters, digits, ".", "_" or "-".`, ['encryptionKey', 'keys']);
    }
    if (id === NO_ENCRYPTION) invalidOption('encryptionKey.keys', `holds a key named "${NO_ENCRYPTION}": that id means "in clear" (\`current: '${NO_ENCRYPTION}'\`); name the key otherwise.`, ['encryptionKey', 'keys']);
    parsed.set(id, parseKey(key, `encryptionKey.keys.${id}`, ['encryptionKey', 'keys', id]));
  }
  if (current === NO_ENCRYPTION && !allowPlaintext) {
    invalidOption('encryptionKey.current', `is '${NO_ENCRYPTION}' (values written in clear) in a keyring without \`allowPlaintext: true\`: add it for the move to a key.`, ['encryptionKey', 'current']);
  }
  if (typeof current !== 'string' || (current !== NO_ENCRYPTION && !parsed.has(current))) {
    invalidOption(
      'encryptionKey.current',
      `must be the id of one of \`encryptionKey.keys\` (${[...parsed.keys()].join(', ')}): the key new values are written with.`,
      ['encryptionKey', 'current'],
    );
  }
  return { current, keys: parsed, allowPlaintext };
}

function parseKey(input: unknown, name: string, path: string[] = [name]): Uint8Array<ArrayBuffer> {
  if (input instanceof Uint8Array) {
    if (input.length !== KEY_BYTES) invalidOption(name, `must be ${KEY_BYTES} bytes (AES-256); got ${input.length} bytes. ${FIX}`, path);
    return new Uint8Array(input); // a copy: the caller may reuse or zero their buffer
  }
  if (typeof input === 'string') {
    if (input.trim() === '') invalidOption(name, `is an empty string (an environment variable set to nothing?). ${FIX}`, path);
    const bytes = fromBase64(input.trim());
    if (bytes === undefined) invalidOption(name, `is a string but not base64 or base64url. ${FIX}`, path);
    if (bytes.length !== KEY_BYTES) {
      invalidOption(name, `must decode to ${KEY_BYTES} bytes (AES-256); this base64 text decodes to ${bytes.length} bytes. ${FIX}`, path);
    }
    return bytes;
  }
  return invalidOption(
    name,
    `must be a Uint8Array (or Buffer) of ${KEY_BYTES} bytes or its base64 text${name === 'encryptionKey' ? ', or a keyring { current, keys }' : ''}; got ${kindOf(input)}. ${FIX}`,
    path,
  );
}

/** What was given instead of a key, by kind, never by value ("a Float32Array", "an Array", "null", "a number"). */
function kindOf(input: unknown): string {
  if (input === null || input === undefined) return String(input);
  const name = typeof input === 'object' ? (Object.getPrototypeOf(input) as { constructor?: { name?: unknown } } | null)?.constructor?.name : typeof input;
  const kind = typeof name === 'string' && /^\w{1,40}$/.test(name) ? name : 'object';
  return `${/^[aeiou]/i.test(kind) ? 'an' : 'a'} ${kind}`;
}

function utf8(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text);
}


/**
 * The toolset's HMACs: confirmations of destructive actions (bound to the exact action, short-lived) and the
 * idempotency keys of `schedule_post` (one per intended post). One key per toolset: from the options, or random.
 */
import { randomHex, toHex } from '../core/bytes.js';
import { equalsHex } from '../webhooks/signature.js';
import { webCrypto } from '../webhooks/crypto-web.js';
import { ToolRefusal } from './define.js';

/** JSON with object keys sorted, so that one action has one text whatever the order of its fields. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export class Seal {
  readonly #secret: string;
  readonly #ttlMs: number;

  constructor(secret: string | undefined, ttlSeconds: number) {
    this.#secret = secret ?? randomHex(32);
    this.#ttlMs = ttlSeconds * 1000;
  }

  async #mac(purpose: string, text: string): Promise<Uint8Array | ArrayBuffer> {
    return webCrypto.hmac(this.#secret, `postsched-tools/${purpose}\n`, text);
  }

  /** A confirmation of `action` (the tool's name and its normalized input), valid for the toolset's TTL. */
  async confirmation(tool: string, action: Record<string, unknown>): Promise<{ confirmation: string; expires_at: string }> {
    const expires = Date.now() + this.#ttlMs;
    const mac = await this.#mac('confirm', `${tool}\n${expires}\n${canonical(action)}`);
    return { confirmation: `${expires.toString(36)}.${toHex(new Uint8Array(mac))}`, expires_at: new Date(expires).toISOString() };
  }

  /** Refuses unless `confirmation` was made by `confirmation()` for this very action and has not expired. */
  async check(tool: string, action: Record<string, unknown>, confirmation: string): Promise<void> {
    const [time = '', mac = ''] = confirmation.split('.');
    const expires = /^[0-9a-z]{1,12}$/.test(time) ? Number.parseInt(time, 36) : Number.NaN;
    const expected = await this.#mac('confirm', `${tool}\n${expires}\n${canonical(action)}`);
    if (!/^[0-9a-f]{64}$/.test(mac) || !equalsHex(expected, mac)) {
      throw new ToolRefusal(
        `The confirmation does not match this ${tool} call: it was made for another action, or changed. Nothing was done. ` +
          `Call ${tool} without \`confirmation\` to preview this exact action and get its confirmation, show the preview to the user, ` +
          'and only with their approval call again with the same input and that confirmation.',
      );
    }
    if (!(Date.now() <= expires)) {
      throw new ToolRefusal(`The confirmation expired at ${new Date(expires).toISOString()}. Nothing was done. Preview the action again (call ${tool} without \`confirmation\`) and ask the user again.`);
    }
  }

  /** The idempotency key of one intended action: the same input gives the same key in this toolset. */
  async idempotencyKey(tool: string, action: Record<string, unknown>): Promise<string> {
    return `pst_${toHex(new Uint8Array(await this.#mac('idempotency', `${tool}\n${canonical(action)}`))).slice(0, 48)}`;
  }
}


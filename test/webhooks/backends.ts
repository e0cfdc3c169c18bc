/** Both webhook entries, so every suite runs against Web Crypto and node:crypto alike. */
import { createHmac } from 'node:crypto';
import * as web from '../../src/webhooks/index.js';
import * as node from '../../src/webhooks/node.js';

export const backends = [
  { name: 'Web Crypto entry', api: web },
  { name: 'node:crypto entry', api: node },
] as const;

export type WebhooksApi = typeof web;

export const SECRET = 'whsec_test_2f8a1c';
/**
 * 2024-05-01T14:00:00Z, as Unix seconds; tests pass it as `now` so the clock never matters. After the `created_at`
 * of every test event (2024-05-01, by 13:00), as the service signs an event after it happened.
 */
export const T = 1_714_572_000;
export const NOW = T * 1000;

/** The reference signature: HMAC-SHA256 over "<t>.<body bytes>", lowercase hex, straight from node:crypto. */
export function hmacHex(secret: string, t: number | string, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

export function header(secret: string, t: number, body: string | Uint8Array): string {
  return `t=${t},v1=${hmacHex(secret, t, body)}`;
}

export const publishedBody = JSON.stringify({
  event: 'post.published',
  created_at: '2024-05-01T12:00:00Z',
  data: { id: 'post_1', account_ids: ['acc_1', 'acc_2'], published_at: '2024-05-01T12:00:00Z', url: 'https://x/1' },
});

/** Runs `fn` and returns what it threw (or fails the test when it did not throw). */
export async function thrown(fn: () => Promise<unknown>): Promise<Error & { reason?: string }> {
  try {
    await fn();
  } catch (error) {
    return error as Error & { reason?: string };
  }
  throw new Error('expected a rejection');
}

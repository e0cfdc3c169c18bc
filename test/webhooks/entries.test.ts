import { afterEach, describe, expect, it, vi } from 'vitest';
import * as main from '@postsched/sdk';
import * as resolved from '@postsched/sdk/webhooks';
import * as web from '../../src/webhooks/index.js';
import * as node from '../../src/webhooks/node.js';
import { NOW, SECRET, T, header, hmacHex, publishedBody, thrown } from './backends.js';

describe('webhook entry points', () => {
  afterEach(() => vi.restoreAllMocks());

  it('export exactly the same API from the Web Crypto and the node:crypto entry', () => {
    expect(Object.keys(web).sort()).toEqual(Object.keys(node).sort());
    expect(Object.keys(web).sort()).toEqual([
      'DEFAULT_WEBHOOK_MAX_BODY_BYTES',
      'DEFAULT_WEBHOOK_TOLERANCE_SECONDS',
      'PostDeletedEventSchema',
      'PostFailedEventSchema',
      'PostPublishedDataSchema',
      'PostPublishedEventSchema',
      'PostScheduledEventSchema',
      'UnknownWebhookEventSchema',
      'WEBHOOK_EVENT_TYPES',
      'WEBHOOK_SIGNATURE_HEADER',
      'WebhookEventSchema',
      'WebhookPostDataSchema',
      'WebhookTimeoutError',
      'WebhookVerificationError',
      'createWebhookHandler',
      'signWebhook',
      'verifyWebhook',
      'verifyWebhookRequest',
      'webhookDedupeKey',
    ]);
    // One error class, so `instanceof` works whichever entry threw.
    expect(web.WebhookVerificationError).toBe(node.WebhookVerificationError);
    expect(web.WebhookTimeoutError).toBe(node.WebhookTimeoutError);
    expect('WebhookTimeoutError' in main).toBe(false); // the handler's names stay out of the main entry
  });

  it('are reachable as @postsched/sdk/webhooks only: the main entry is the API client (issue 22)', () => {
    expect(resolved.verifyWebhook).toBe(node.verifyWebhook); // Node resolves the node:crypto entry
    expect(Object.keys(main).filter((name) => /webhook/i.test(name))).toEqual([]);
  });

  it('recognizes a WebhookVerificationError thrown by another copy of the SDK', async () => {
    vi.resetModules(); // the modules loaded afresh: what a second bundle or the other build format holds
    const other = await import('../../src/webhooks/index.js');
    expect(other.WebhookVerificationError).not.toBe(web.WebhookVerificationError);
    expect(new other.WebhookVerificationError('invalid_json', 'x')).toBeInstanceOf(web.WebhookVerificationError);
    expect(new (Object.getPrototypeOf(other.WebhookVerificationError))('x')).not.toBeInstanceOf(web.WebhookVerificationError);
  });

  it('imports the Web Crypto key once per secret, not once per delivery', async () => {
    const importKey = vi.spyOn(crypto.subtle, 'importKey');
    const secret = `${SECRET}_cache`;
    for (let i = 0; i < 5; i++) {
      await web.verifyWebhook({ body: publishedBody, signature: header(secret, T, publishedBody), secret, now: NOW });
    }
    expect(importKey).toHaveBeenCalledTimes(1);
  });

  it('keeps the key cache bounded when secrets keep changing', async () => {
    const importKey = vi.spyOn(crypto.subtle, 'importKey');
    const secrets = Array.from({ length: 40 }, (_, i) => `whsec_${i}`);
    for (const secret of [...secrets, secrets[0]!]) await web.signWebhook({ body: '', secret, timestamp: T });
    // The first secret was evicted by the 39 after it, so it is imported again: the cache did not grow to 40.
    expect(importKey).toHaveBeenCalledTimes(41);
  });

  it('starts the HMAC of a known secret before verifyWebhook returns, so JSON.parse runs while it hashes', async () => {
    const secret = `${SECRET}_overlap`;
    const verify = () => web.verifyWebhook({ body: publishedBody, signature: header(secret, T, publishedBody), secret, now: NOW });
    await verify(); // imports the key
    const sign = vi.spyOn(crypto.subtle, 'sign');
    const parse = vi.spyOn(JSON, 'parse');
    const pending = verify();
    expect(sign).toHaveBeenCalledTimes(1); // already under way
    expect(sign.mock.invocationCallOrder[0]!).toBeLessThan(parse.mock.invocationCallOrder[0]!);
    await expect(pending).resolves.toMatchObject({ event: 'post.published' });
  });

  it('imports a key again after a failed import (a failure is not cached)', async () => {
    const secret = `${SECRET}_fails_once`;
    const importKey = vi.spyOn(crypto.subtle, 'importKey').mockRejectedValueOnce(new Error('no key today'));
    const sign = () => web.signWebhook({ body: '', secret, timestamp: T });
    await expect(sign()).rejects.toThrow('no key today');
    await expect(sign()).resolves.toBe(`t=${T},v1=${hmacHex(secret, T, '')}`);
    expect(importKey).toHaveBeenCalledTimes(2);
  });

  it('does not bring back a key evicted while it was being imported', async () => {
    const importKey = vi.spyOn(crypto.subtle, 'importKey');
    const first = web.signWebhook({ body: '', secret: 'whsec_evicted_early', timestamp: T });
    // 16 other secrets evict the first while its import is still pending.
    await Promise.all(Array.from({ length: 16 }, (_, i) => web.signWebhook({ body: '', secret: `whsec_evictor_${i}`, timestamp: T })));
    await first;
    await web.signWebhook({ body: '', secret: 'whsec_evicted_early', timestamp: T });
    expect(importKey).toHaveBeenCalledTimes(18);
  });

  it('computes no HMAC for a header of 1,000 v1 entries', async () => {
    const sign = vi.spyOn(crypto.subtle, 'sign');
    const signature = `t=${T},v1=${hmacHex(SECRET, T, publishedBody)}` + `,v1=${'0'.repeat(64)}`.repeat(999);
    const error = await thrown(() => web.verifyWebhook({ body: publishedBody, signature, secret: SECRET, now: NOW }));
    expect(error.reason).toBe('malformed_signature');
    expect(sign).not.toHaveBeenCalled();
  });
});

import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PostSchedError, ValidationError } from '@postsched/sdk';
import { NOW, SECRET, T, backends, header, hmacHex, publishedBody, thrown } from './backends.js';

const emojiBody = JSON.stringify({
  event: 'post.scheduled',
  created_at: '2024-05-01T12:00:00Z',
  data: { id: 'post_🎉', account_ids: ['acc_東京'], text: 'Grüße 👋🏽 你好' },
});

describe.each(backends)('verifyWebhook ($name)', ({ api }) => {
  const { verifyWebhook, signWebhook, WebhookVerificationError } = api;
  const verify = (options: Partial<Parameters<typeof verifyWebhook>[0]> = {}) =>
    verifyWebhook({ body: publishedBody, signature: header(SECRET, T, publishedBody), secret: SECRET, now: NOW, ...options });
  const reasonOf = async (options: Partial<Parameters<typeof verifyWebhook>[0]>) => (await thrown(() => verify(options))).reason;

  describe('known vectors (HMAC computed independently with node:crypto)', () => {
    it.each([
      ['an empty body', ''],
      ['a JSON body', publishedBody],
      ['an emoji and CJK body', emojiBody],
    ])('signWebhook signs %s exactly like createHmac', async (_, body) => {
      await expect(signWebhook({ body, secret: SECRET, timestamp: T })).resolves.toBe(
        `t=${T},v1=${hmacHex(SECRET, T, body)}`,
      );
    });

    it('accepts a JSON body signed by the reference HMAC and returns the typed event', async () => {
      const event = await verify();
      expect(event.event).toBe('post.published');
      if (event.event !== 'post.published') throw new Error('narrowing');
      expect(event.data.published_at).toBe('2024-05-01T12:00:00Z');
      expect(event.data.account_ids).toEqual(['acc_1', 'acc_2']);
      expect(event.data.url).toBe('https://x/1'); // unknown data fields pass through
    });

    it('accepts an emoji body signed by the reference HMAC', async () => {
      const event = await verify({ body: emojiBody, signature: header(SECRET, T, emojiBody) });
      expect(event.data.id).toBe('post_🎉');
    });

    // The spec shows the data of post.published only (§6: other events' data fields "not shown"): a correctly signed
    // post.scheduled, post.failed or post.deleted comes back whatever its data holds, as the service sent it.
    it.each([
      ['post.scheduled', {}],
      ['post.failed', { id: 42, account_ids: 'acc_1', reason: 'token revoked' }],
      ['post.deleted', { id: 'post_1' }],
      ['post.deleted', { account_ids: [1, null] }],
    ])('accepts a signed %s whose data is %j, unchanged', async (name, data) => {
      const body = JSON.stringify({ event: name, created_at: '2024-05-01T12:00:00Z', data });
      const event = await verify({ body, signature: header(SECRET, T, body) });
      expect(event).toEqual({ event: name, created_at: '2024-05-01T12:00:00Z', data });
    });

    it('matches the signature of an empty body, then reports it is not JSON', async () => {
      expect(await reasonOf({ body: '', signature: header(SECRET, T, '') })).toBe('invalid_json');
      expect(await reasonOf({ body: '', signature: header('other', T, '') })).toBe('no_matching_signature');
    });
  });

  describe('every rejection has its reason code', () => {
    const good = header(SECRET, T, publishedBody);
    const hex = hmacHex(SECRET, T, publishedBody);
    const signedAs = (body: string) => ({ body, signature: header(SECRET, T, body) });

    it.each([
      ['missing_signature', 'no signature', { signature: undefined }],
      ['missing_signature', 'a blank header', { signature: '   ' }],
      ['missing_signature', 'headers without the signature', { signature: new Headers({ a: 'b' }) }],
      ['malformed_signature', 'garbage', { signature: 'garbage' }],
      ['malformed_signature', 'a missing t', { signature: `v1=${hex}` }],
      ['malformed_signature', 'a non-integer t', { signature: `t=17e8,v1=${hex}` }],
      ['malformed_signature', 'a fractional t', { signature: `t=${T}.5,v1=${hex}` }],
      ['malformed_signature', 'a negative t', { signature: `t=-${T},v1=${hex}` }],
      ['malformed_signature', 'a duplicated t', { signature: `t=${T},t=${T},v1=${hex}` }],
      ['malformed_signature', 'an empty v1', { signature: `t=${T},v1=` }],
      ['malformed_signature', 'a non-hex v1', { signature: `t=${T},v1=${'z'.repeat(64)}` }],
      ['malformed_signature', 'uppercase hex', { signature: `t=${T},v1=${hex.toUpperCase()}` }],
      ['malformed_signature', 'a truncated v1', { signature: `t=${T},v1=${hex.slice(1)}` }],
      ['malformed_signature', 'only an unknown scheme', { signature: `t=${T},v0=${hex}` }],
      ['malformed_signature', 'a header over 4 KiB', { signature: `${good},v0=${'a'.repeat(4096)}` }],
      ['malformed_signature', 'a numeric header value', { signature: { 'x-service-signature': 42 } }],
      ['timestamp_too_old', 'an old timestamp', { now: NOW + 301_000 }],
      ['timestamp_in_future', 'a future timestamp', { now: NOW - 301_000 }],
      ['no_matching_signature', 'the wrong secret', { secret: 'whsec_other' }],
      ['no_matching_signature', 'a tampered body', { body: publishedBody.replace('post_1', 'post_2') }],
      ['body_not_raw', 'a parsed object', { body: JSON.parse(publishedBody) as never }],
      ['body_not_raw', 'an undefined body', { body: undefined as never }],
      ['body_not_raw', 'a number', { body: 42 as never }],
      ['body_not_raw', 'a Node stream (the request itself, not its body)', { body: Readable.from([publishedBody]) as never }],
      ['invalid_secret', 'an empty secret', { secret: '' }],
      ['invalid_secret', 'a blank secret', { secret: '  \n' }],
      ['invalid_secret', 'a newline-padded secret', { secret: `${SECRET}\n` }],
      ['invalid_secret', 'an undefined secret', { secret: undefined as never }],
      ['invalid_secret', 'an empty secret list', { secret: [] }],
      ['invalid_json', 'a signed body that is not JSON', signedAs('{"event": ')],
      ['invalid_event', 'a signed JSON array', signedAs('[]')],
      ['invalid_event', 'a signed event without data', signedAs('{"event":"post.failed","created_at":"x"}')],
      ['invalid_event', 'a published event without published_at', signedAs(
        '{"event":"post.published","created_at":"x","data":{"id":"p","account_ids":[]}}')],
      ['invalid_event', 'non-string account ids on post.published', signedAs(
        '{"event":"post.published","created_at":"x","data":{"id":"p","account_ids":[1],"published_at":"y"}}')],
      ['invalid_event', 'a published event without id', signedAs(
        '{"event":"post.published","created_at":"x","data":{"account_ids":[],"published_at":"y"}}')],
    ] as const)('%s for %s', async (reason, _, options) => {
      const error = await thrown(() => verify(options as never));
      expect(error).toBeInstanceOf(WebhookVerificationError);
      expect(error).toBeInstanceOf(PostSchedError);
      expect(error.name).toBe('WebhookVerificationError');
      expect(error.reason).toBe(reason);
      // The secret never shows, in the message or anywhere a logger looks.
      for (const shown of [error.message, JSON.stringify(error), inspect(error, { depth: 5 })]) {
        expect(shown).not.toContain(SECRET);
      }
    });

    it('tells the user to pass the raw body when given a parsed object', async () => {
      const error = await thrown(() => verify({ body: JSON.parse(publishedBody) as never }));
      expect(error.message).toMatch(/raw body: express\.raw\(\), request\.text\(\)/);
    });

    it('says the secret is whitespace-padded, without showing it', async () => {
      const error = await thrown(() => verify({ secret: ` ${SECRET}` }));
      expect(error.message).toMatch(/padded with whitespace: trim it/);
      expect(error.message).not.toContain(SECRET);
    });

    it.each([
      ['a missing secret', { secret: undefined as never }, /Secret is not a string: .*dashboard; is POSTSCHED_WEBHOOK_SECRET set\?/],
      ['an empty secret list', { secret: [] }, /Secret is empty: .*dashboard; is POSTSCHED_WEBHOOK_SECRET set\?/],
      ['a numeric header value', { signature: { 'x-service-signature': 42 } as never }, /expected t=<seconds>,v1=<64 lowercase hex>/],
      ['a missing header', { signature: undefined }, /X-Service-Signature: missing/],
      ['an old timestamp', { now: NOW + 301_000 }, /301s old, over 300s tolerance: a replay, or a slow clock/],
      ['a future timestamp', { now: NOW - 301_000 }, /301s ahead, over 300s tolerance: check the clock/],
      ['the wrong secret', { secret: 'whsec_other' }, /^Signature does not match the secret: a wrong secret, or the raw body was changed before verification$/],
    ] as const)('says what to fix for %s', async (_, options, message) => {
      expect((await thrown(() => verify(options))).message).toMatch(message);
    });

    it.each([
      ['an invalid Date', new Date('not a date')],
      ['a string', 'yesterday'], // not a TypeError from calling getTime() on it
    ])('refuses a `now` that is not a time (%s), saying what to pass (a ValidationError naming it, as every option)', async (_, now) => {
      const error = await thrown(() => verify({ now: now as never }));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ path: ['now'] });
      expect(error.message).toMatch(/^`now` must be a Date or ms since 1970/);
    });

    it('rejects the promise it returns, never throwing synchronously', async () => {
      for (const options of [{ secret: '' }, { body: {} as never }, { signature: 'garbage' }, { toleranceSeconds: -1 }]) {
        let pending: Promise<unknown> | undefined;
        expect(() => (pending = verify(options))).not.toThrow();
        await expect(pending).rejects.toBeInstanceOf(PostSchedError);
      }
    });

    it('reports a configuration mistake before judging the delivery', async () => {
      expect(await reasonOf({ secret: '', signature: 'garbage' })).toBe('invalid_secret');
      expect(await reasonOf({ body: {} as never, signature: undefined })).toBe('body_not_raw');
    });
  });

  describe('timestamp tolerance', () => {
    it.each([
      ['exactly 300 s old', 300, 'ok'],
      ['301 s old', 301, 'timestamp_too_old'],
      ['exactly 300 s in the future', -300, 'ok'],
      ['301 s in the future', -301, 'timestamp_in_future'],
    ])('a signature %s is %s', async (_, ageSeconds, expected) => {
      const outcome = verify({ now: NOW + ageSeconds * 1000 }).then(() => 'ok', (error: { reason: string }) => error.reason);
      await expect(outcome).resolves.toBe(expected);
    });

    it('honours toleranceSeconds and a Date as now', async () => {
      await expect(verify({ now: new Date(NOW + 600_000), toleranceSeconds: 600 })).resolves.toBeTruthy();
      expect(await reasonOf({ now: new Date(NOW + 11_000), toleranceSeconds: 10 })).toBe('timestamp_too_old');
    });

    it('checks against the real clock by default', async () => {
      const t = Math.floor(Date.now() / 1000);
      await expect(verify({ now: undefined, signature: header(SECRET, t, publishedBody) })).resolves.toBeTruthy();
      expect(await reasonOf({ now: undefined })).toBe('timestamp_too_old'); // T is in 2023
    });

    it('refuses a negative or NaN tolerance with a typed error', async () => {
      for (const toleranceSeconds of [-1, Number.NaN]) {
        const error = await thrown(() => verify({ toleranceSeconds }));
        expect(error).toBeInstanceOf(PostSchedError);
        expect(error.message).toMatch(/toleranceSeconds/);
      }
    });
  });

  describe('secret rotation', () => {
    it('accepts a delivery signed with either of two secrets', async () => {
      for (const signer of ['whsec_old', 'whsec_new']) {
        const event = await verify({ signature: header(signer, T, publishedBody), secret: ['whsec_new', 'whsec_old'] });
        expect(event.event).toBe('post.published');
      }
      expect(await reasonOf({ signature: header('whsec_gone', T, publishedBody), secret: ['whsec_new', 'whsec_old'] }))
        .toBe('no_matching_signature');
    });

    it('accepts a header that carries one v1 per secret while the service rotates', async () => {
      const signature = `t=${T},v1=${hmacHex('whsec_old', T, publishedBody)},v1=${hmacHex('whsec_new', T, publishedBody)}`;
      await expect(verify({ signature, secret: 'whsec_new' })).resolves.toBeTruthy();
    });
  });

  describe('header parsing', () => {
    const hex = hmacHex(SECRET, T, publishedBody);

    it('tolerates spaces around "," and "=" and ignores unknown schemes', async () => {
      await expect(verify({ signature: ` t = ${T} , v0 = abc ,  v1= ${hex} ` })).resolves.toBeTruthy();
      await expect(verify({ signature: `v1=${hex},t=${T}` })).resolves.toBeTruthy();
    });

    it('rejects 1,000 v1 entries before any HMAC, even when the first one is valid', async () => {
      const signature = `t=${T},v1=${hex}` + `,v1=${'0'.repeat(64)}`.repeat(999);
      const error = await thrown(() => verify({ signature }));
      expect(error.reason).toBe('malformed_signature');
      expect(error.message).toMatch(/over 4096 characters/);
    });

    it('compares only the first 8 v1 entries', async () => {
      const wrong = `,v1=${'0'.repeat(64)}`;
      await expect(verify({ signature: `t=${T}${wrong.repeat(7)},v1=${hex}` })).resolves.toBeTruthy();
      expect(await reasonOf({ signature: `t=${T}${wrong.repeat(8)},v1=${hex}` })).toBe('no_matching_signature');
    });

    it('signs with the t exactly as written (leading zeros included)', async () => {
      const signature = `t=0${T},v1=${hmacHex(SECRET, `0${T}`, publishedBody)}`;
      await expect(verify({ signature })).resolves.toBeTruthy();
    });
  });

  describe('headers objects of every kind', () => {
    const value = header(SECRET, T, publishedBody);
    it.each([
      ['the header value', value],
      ['a one-element array (Node array header)', [value]],
      ['Fetch Headers', new Headers({ 'X-Service-Signature': value, 'content-type': 'application/json' })],
      ['Node IncomingHttpHeaders (lowercase keys)', { 'x-service-signature': value, 'set-cookie': ['a=b'] }],
      ['a plain object with canonical casing', { 'X-Service-Signature': value }],
      ['a plain object with odd casing', { 'x-SERVICE-signature': value }],
      ['a Node header holding an array value', { 'x-service-signature': [value] }],
      ['a Map-like getter', { get: (name: string) => (name === 'x-service-signature' ? value : null) }],
    ])('reads the signature from %s', async (_, signature) => {
      await expect(verify({ signature: signature as never })).resolves.toBeTruthy();
    });

    it('joins a repeated header as Node does, so two different t values are refused', async () => {
      const other = header(SECRET, T + 1, publishedBody);
      expect(await reasonOf({ signature: { 'x-service-signature': [value, other] } })).toBe('malformed_signature');
    });
  });

  describe('raw bodies', () => {
    const bytes = new TextEncoder().encode(emojiBody);
    const signature = header(SECRET, T, emojiBody);

    it.each([
      ['a string', emojiBody],
      ['a Uint8Array', bytes],
      ['a Buffer', Buffer.from(emojiBody)],
      ['a Buffer slice with an offset', Buffer.from(`xx${emojiBody}yy`).subarray(2, 2 + bytes.length)],
      ['an ArrayBuffer', bytes.slice().buffer],
      ['a DataView', new DataView(bytes.slice().buffer)],
    ])('verifies the same non-ASCII bytes given as %s', async (_, body) => {
      const event = await verify({ body: body as never, signature });
      expect(event.data.account_ids).toEqual(['acc_東京']);
    });

    it('rejects a body that was re-serialized (whitespace changed)', async () => {
      const pretty = JSON.stringify(JSON.parse(publishedBody), null, 2);
      const signed = header(SECRET, T, pretty);
      await expect(verify({ body: pretty, signature: signed })).resolves.toBeTruthy();
      expect(await reasonOf({ body: JSON.stringify(JSON.parse(pretty)), signature: signed })).toBe('no_matching_signature');
    });

    it('keeps a byte-order mark, so a string and its bytes give the same answer', async () => {
      const withBom = `\uFEFF${publishedBody}`;
      const signed = header(SECRET, T, withBom);
      expect(await reasonOf({ body: withBom, signature: signed })).toBe('invalid_json');
      expect(await reasonOf({ body: new TextEncoder().encode(withBom), signature: signed })).toBe('invalid_json');
    });
  });

  describe('events', () => {
    const signed = (body: string) => ({ body, signature: header(SECRET, T, body) });

    it.each(['post.scheduled', 'post.published', 'post.failed', 'post.deleted'])('returns %s as a known event', async (name) => {
      const body = JSON.stringify({
        event: name,
        created_at: '2024-05-01T12:00:00Z',
        data: { id: 'p', account_ids: ['a'], published_at: '2024-05-01T12:00:00Z', reason: 'x' },
      });
      const event = await verify(signed(body));
      expect(event).toEqual(JSON.parse(body));
    });

    it('returns an event it does not know as "unknown", with its name and every field kept', async () => {
      const body = JSON.stringify({ event: 'post.archived', created_at: 'c', data: { id: 'p', extra: 1 }, v: 2 });
      const event = await verify(signed(body));
      expect(event).toEqual({ event: 'unknown', originalEvent: 'post.archived', created_at: 'c', data: { id: 'p', extra: 1 }, v: 2 });
      if (event.event === 'unknown') expect(event.originalEvent).toBe('post.archived');
    });
  });

  describe('signWebhook', () => {
    it('signs with the current time by default, and its header verifies', async () => {
      const signature = await signWebhook({ body: publishedBody, secret: SECRET });
      await expect(verifyWebhook({ body: publishedBody, signature, secret: SECRET })).resolves.toBeTruthy();
    });

    it('refuses a fractional timestamp and an invalid secret with typed errors', async () => {
      await expect(signWebhook({ body: '', secret: SECRET, timestamp: 1.5 })).rejects.toBeInstanceOf(PostSchedError);
      for (const timestamp of [1.5, -1, new Date('not a date')]) {
        const refused = await thrown(() => signWebhook({ body: '', secret: SECRET, timestamp }));
        expect(refused).toBeInstanceOf(ValidationError);
        expect(refused).toMatchObject({ path: ['timestamp'] });
      }
      const error = await thrown(() => signWebhook({ body: '', secret: `${SECRET} ` }));
      expect(error.reason).toBe('invalid_secret');
    });
  });
});

describe('Web Crypto from another realm (edge-runtime runs the bundle in a VM context)', () => {
  it('verifies when crypto.subtle answers with promises that are not this realm’s Promise', async () => {
    const { runInNewContext } = await import('node:vm');
    const { vi } = await import('vitest');
    const OtherPromise = runInNewContext('Promise') as PromiseConstructor;
    const subtle = globalThis.crypto.subtle;
    const importKey = subtle.importKey.bind(subtle);
    const sign = subtle.sign.bind(subtle);
    const spies = [
      vi.spyOn(subtle, 'importKey').mockImplementation(((...args: Parameters<SubtleCrypto['importKey']>) =>
        new OtherPromise((resolve, reject) => importKey(...args).then(resolve, reject))) as never),
      vi.spyOn(subtle, 'sign').mockImplementation(((...args: Parameters<SubtleCrypto['sign']>) =>
        new OtherPromise((resolve, reject) => sign(...args).then(resolve, reject))) as never),
    ];
    try {
      const web = backends[0].api;
      // A secret no other test imported, so the key cache starts empty: first the pending import, then the key.
      const secret = 'whsec_other_realm_7d1e';
      for (let i = 0; i < 2; i++) {
        const event = await web.verifyWebhook({ body: publishedBody, signature: header(secret, T, publishedBody), secret, now: NOW });
        expect(event.event).toBe('post.published');
      }
      expect(spies[1]!.mock.calls.length).toBe(2);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NOW, T, backends, header } from './backends.js';

const HEADER_CHARS = [...'0123456789abcdefABCDEFtv1x,= '];

/** A well-formed secret: non-empty, no surrounding whitespace (any code points inside). */
const secretArb = fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }).filter((s) => s.trim() === s && s !== '');

const deliveryArb = fc.record({
  secret: secretArb,
  id: fc.string({ unit: 'grapheme', maxLength: 20 }),
  note: fc.string({ unit: 'grapheme', maxLength: 200 }),
});

/** One change to a valid delivery; none of them may be accepted. */
const mutationArb = fc.oneof(
  fc.record({ kind: fc.constant('header-substitute'), at: fc.nat(), char: fc.constantFrom(...HEADER_CHARS) }),
  // Inserted characters are never whitespace: spaces around "," and "=" are allowed on purpose.
  fc.record({ kind: fc.constant('header-insert'), at: fc.nat(), char: fc.constantFrom(...HEADER_CHARS.filter((c) => c !== ' ')) }),
  fc.record({ kind: fc.constant('header-delete'), at: fc.nat() }),
  fc.record({ kind: fc.constant('body-flip'), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('body-insert'), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('body-delete'), at: fc.nat() }),
  fc.record({ kind: fc.constant('secret'), other: fc.string({ maxLength: 40, unit: 'grapheme' }) }),
  fc.record({ kind: fc.constant('clock'), skew: fc.integer({ min: 301, max: 10 ** 9 }), sign: fc.constantFrom(1, -1) }),
);

type Mutation = typeof mutationArb extends fc.Arbitrary<infer M> ? M : never;
type Delivery = { body: Uint8Array; signature: string; secret: string; now: number };

function mutate(delivery: Delivery, m: Mutation): Delivery | undefined {
  const { body, signature } = delivery;
  const i = (length: number) => ('at' in m ? m.at : 0) % Math.max(length, 1);
  switch (m.kind) {
    case 'header-substitute': {
      const at = i(signature.length);
      if (signature[at] === m.char) return undefined; // not a change
      return { ...delivery, signature: signature.slice(0, at) + m.char + signature.slice(at + 1) };
    }
    case 'header-insert': {
      const at = m.at % (signature.length + 1);
      return { ...delivery, signature: signature.slice(0, at) + m.char + signature.slice(at) };
    }
    case 'header-delete': {
      const at = i(signature.length);
      return { ...delivery, signature: signature.slice(0, at) + signature.slice(at + 1) };
    }
    case 'body-flip': {
      if (body.length === 0) return undefined;
      const copy = body.slice();
      copy[i(body.length)]! ^= m.xor;
      return { ...delivery, body: copy };
    }
    case 'body-insert': {
      const at = m.at % (body.length + 1);
      return { ...delivery, body: Uint8Array.of(...body.subarray(0, at), m.byte, ...body.subarray(at)) };
    }
    case 'body-delete': {
      if (body.length === 0) return undefined;
      const at = i(body.length);
      return { ...delivery, body: Uint8Array.of(...body.subarray(0, at), ...body.subarray(at + 1)) };
    }
    case 'secret':
      return m.other === delivery.secret ? undefined : { ...delivery, secret: m.other };
    case 'clock':
      return { ...delivery, now: delivery.now + m.sign * m.skew * 1000 };
  }
}

describe.each(backends)('property: no mutation of a valid delivery verifies ($name)', ({ api }) => {
  const { verifyWebhook, WebhookVerificationError } = api;

  it('rejects every mutated header, body, secret or clock with a WebhookVerificationError', async () => {
    await fc.assert(
      fc.asyncProperty(deliveryArb, mutationArb, async ({ secret, id, note }, m) => {
        const text = JSON.stringify({ event: 'post.failed', created_at: 'c', data: { id, account_ids: [], note } });
        const original = { body: new TextEncoder().encode(text), signature: header(secret, T, text), secret, now: NOW };
        // The unmutated delivery verifies, so a rejection below is caused by the mutation.
        await expect(verifyWebhook(original)).resolves.toMatchObject({ event: 'post.failed' });
        const mutated = mutate(original, m);
        fc.pre(mutated !== undefined);
        const outcome = await verifyWebhook(mutated!).then(
          () => 'accepted',
          (error: unknown) => error,
        );
        expect(outcome).toBeInstanceOf(WebhookVerificationError);
      }),
      { numRuns: 300 },
    );
  });

  it('throws only WebhookVerificationError for arbitrary bodies, headers and secrets', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string(), fc.uint8Array(), fc.anything()),
        fc.oneof(fc.string(), fc.array(fc.string()), fc.dictionary(fc.string(), fc.anything()), fc.anything()),
        fc.oneof(secretArb, fc.anything()),
        async (body, signature, secret) => {
          const outcome = await verifyWebhook({ body, signature, secret, now: NOW } as never).then(
            () => 'accepted',
            (error: unknown) => error,
          );
          expect(outcome).toBeInstanceOf(WebhookVerificationError);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * The building blocks of the wire schemas (src/resources/wire-contract.ts, src/webhooks/event.ts), shared by the
 * main entry and `@postsched/sdk/webhooks`. Each issue's message is "expected <type>": the SDK's errors add the
 * path and what was received.
 */
import * as z from 'zod/mini';

/** A string. */
export const text = () => z.string({ error: 'expected string' });
/** An array of strings. */
export const texts = () => z.array(text(), { error: 'expected array of strings' });
/** A number. */
export const count = () => z.number({ error: 'expected number' });

/**
 * A field we assumed (the spec does not show it): optional, and kept as sent when it is absent, `null` or not what
 * `schema` expects. The type says what we expect: check the value before relying on it.
 */
export function assumed<T extends z.ZodMiniType>(schema: T): z.ZodMiniOptional<z.ZodMiniType<z.output<T>, unknown>> {
  // What `schema` refuses, `unknown` takes as it is. (Not `z.catch`, which costs 4 KB gz in `verifyWebhook` alone.)
  return z.optional(z.union([schema, z.unknown()])) as never;
}

/** An object of the wire: loose, so fields the SDK does not know pass through. */
export function wireObject<Shape extends z.core.$ZodLooseShape>(shape: Shape): z.ZodMiniObject<Shape, z.core.$loose> {
  return z.looseObject(shape, { error: 'expected object' });
}

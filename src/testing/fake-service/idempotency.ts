/**
 * `Idempotency-Key` on POST (wire contract; status codes from the IETF draft
 * "The Idempotency-Key HTTP Header Field"): the first answer to a key is stored and replayed to any repeat
 * with the same request, without acting again. Keys are per client and live 24 hours on the fake clock.
 */
import type { Context } from './context.js';
import { apiError, HttpError } from './http.js';

const KEY_TTL_MS = 24 * 60 * 60 * 1000;

/** A reserved key: call `store` with the answer, or `release` when the request failed before acting. */
export interface IdempotencySlot {
  store(response: Response): Promise<Response>;
  release(): void;
}

/** Reads and checks the `Idempotency-Key` header; `undefined` when the request carries none. */
export function idempotencyKey(ctx: Context, request: Request, clientId: string): string | undefined {
  const key = request.headers.get('idempotency-key');
  if (key === null) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new HttpError(
      apiError(422, 'validation_error', 'Idempotency-Key must be 1-255 visible ASCII characters.', {
        field: 'Idempotency-Key',
      }),
    );
  }
  return `${clientId}\n${key}`;
}

/**
 * The stored answer's replay when `key` was seen with the same `fingerprint`, an error when it was seen with
 * another request or is still in flight, or a slot to fill when the key is new.
 */
export async function claim(ctx: Context, key: string, fingerprint: string): Promise<Response | IdempotencySlot> {
  const stored = ctx.state.idempotency.get(key);
  if (stored === 'in-flight') {
    return apiError(409, 'idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed.');
  }
  if (stored !== undefined && ctx.clock.now() - stored.storedAt < KEY_TTL_MS) {
    if (stored.fingerprint !== fingerprint) {
      return apiError(
        422,
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request; use a new key for a new request.',
        { field: 'Idempotency-Key' },
      );
    }
    const headers = new Headers(stored.headers);
    headers.set('idempotent-replayed', 'true');
    return new Response(stored.body, { status: stored.status, headers });
  }
  ctx.state.idempotency.set(key, 'in-flight');
  return {
    async store(response) {
      const body = await response.text();
      const headers = [...response.headers];
      ctx.state.idempotency.set(key, { fingerprint, status: response.status, headers, body, storedAt: ctx.clock.now() });
      return new Response(body, { status: response.status, headers });
    },
    release() {
      ctx.state.idempotency.delete(key);
    },
  };
}

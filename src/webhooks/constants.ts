/** Numbers and names of the webhook signature scheme, in one place (service spec §5 "Webhook signature"). */

/**
 * Name of the header that carries the signature, lowercased as Fetch `Headers` and Node report it.
 *
 * @example
 * const signature = request.headers.get(WEBHOOK_SIGNATURE_HEADER) // 't=1700000000,v1=5f…'
 */
export const WEBHOOK_SIGNATURE_HEADER = 'x-service-signature';

/**
 * Default tolerance, in seconds, between the signature timestamp and the receiver's clock, both ways.
 * The spec does not give one (§5 "Webhook signature" 5); see assumptions.md "Webhook timestamp tolerance".
 *
 * @example
 * await verifyWebhook({ body, signature, secret, toleranceSeconds: DEFAULT_WEBHOOK_TOLERANCE_SECONDS * 2 })
 */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * Default cap, in bytes, on a webhook body that the SDK reads itself (`verifyWebhookRequest`,
 * `createWebhookHandler`). Event bodies are a few hundred bytes; the spec gives no size limit (§8), so the cap
 * is generous, and it keeps a hostile sender from filling memory before the signature is known to be wrong.
 *
 * @example
 * await verifyWebhookRequest(request, secret, { maxBodyBytes: 4 * DEFAULT_WEBHOOK_MAX_BODY_BYTES })
 */
export const DEFAULT_WEBHOOK_MAX_BODY_BYTES = 1_048_576; // 1 MiB, a literal so that bundlers drop it when unused

/** A longer header is rejected before any HMAC is computed, so a hostile header costs nothing. */
export const MAX_SIGNATURE_HEADER_LENGTH = 4096;

/** Only this many `v1` entries are compared (rotation needs two); later ones are ignored. */
export const MAX_SIGNATURES = 8;

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

/** A longer header is rejected before any HMAC is computed, so a hostile header costs nothing. */
export const MAX_SIGNATURE_HEADER_LENGTH = 4096;

/** Only this many `v1` entries are compared (rotation needs two); later ones are ignored. */
export const MAX_SIGNATURES = 8;

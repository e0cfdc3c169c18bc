/** Numbers and names of the webhook signature scheme, in one place (service spec §5 "Webhook signature"). */

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

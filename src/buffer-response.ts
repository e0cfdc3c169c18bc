/** Shared by the token requests (src/oauth) and the API requests (src/http): one copy in the bundle. */

/** Null-body statuses (Fetch standard): a Response with one of these cannot be given a body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The response with its body read whole into memory, so that a connection dropped mid-body fails here (inside
 * the caller's time-out and error mapping), not later in a JSON parser.
 */
export async function bufferResponse(response: Response): Promise<Response> {
  const body = NULL_BODY_STATUSES.has(response.status) ? null : await response.arrayBuffer();
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

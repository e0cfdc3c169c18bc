/** Shared by the token requests (src/oauth) and the API requests (src/http): one copy in the bundle. */

/** Null-body statuses (Fetch standard): a Response with one of these cannot be given a body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** The bytes of each buffered answer, so the pipeline reads them without cloning the Response (a tee). */
const bufferedBodies = new WeakMap<Response, ArrayBuffer>();
const decoder = new TextDecoder();

/**
 * The response with its body read whole into memory, so that a connection dropped mid-body fails here (inside
 * the caller's time-out and error mapping), not later in a JSON parser.
 */
export async function bufferResponse(response: Response): Promise<Response> {
  const body = NULL_BODY_STATUSES.has(response.status) ? null : await response.arrayBuffer();
  const buffered = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  if (body !== null) bufferedBodies.set(buffered, body);
  return buffered;
}

/**
 * The text of an answer, leaving the Response's own body unread for `withResponse()`. Answers that came
 * through `bufferResponse` are decoded from the bytes it kept; any other is read through a clone.
 */
export async function responseText(response: Response): Promise<string> {
  const bytes = bufferedBodies.get(response);
  // UTF-8 with the BOM stripped, as Response.text() decodes.
  return bytes === undefined ? response.clone().text() : decoder.decode(bytes);
}

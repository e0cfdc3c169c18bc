/** A JSON object: an object that is neither `null` nor an array. Shared by the input and answer checks. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

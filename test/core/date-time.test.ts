/** The one RFC 3339 reader (src/core/date-time.ts), behind `publish_at`'s check, the webhook dedupe's order and the fake. */
import { describe, expect, it } from 'vitest';
import { parseDateTime } from '../../src/core/date-time.js';

describe('parseDateTime', () => {
  it.each(['2030-01-01T09:00:00Z', '2030-01-01T09:00:00.123456+05:30', '2028-02-29T00:00:00-23:59', '2030-12-31T23:59:59.999Z'])('%s: the instant Date.parse reads', (text) => {
    expect(Math.floor(parseDateTime(text)!)).toBe(Date.parse(text));
    expect(Math.floor(parseDateTime(text, true)!)).toBe(Date.parse(text));
  });

  it.each(['2029-02-29T09:00:00Z', '2030-04-31T09:00:00Z', '2030-01-01T24:00:00Z', '2030-01-01T09:00Z', '2030-01-01T09:00:00+25:00', '2030-13-01T09:00:00Z', '2030-00-01T09:00:00Z', '2030-01-00T09:00:00Z', '2030-01-01T09:00:00'])(
    '%s: no real time with a zone, refused',
    (text) => {
      expect(parseDateTime(text)).toBeUndefined();
      expect(parseDateTime(text, true)).toBeUndefined();
    },
  );

  it.each(['2030-01-01t09:00:00Z', '2030-01-01T09:00:00z', '2030-01-01T09:00:00,5Z', '2030-01-01T09:00:00+0100', '2030-06-30T23:59:60Z', '2030-01-01 09:00:00Z'])(
    "%s: ISO 8601's variants only when lenient",
    (text) => {
      expect(parseDateTime(text)).toBeUndefined();
      expect(parseDateTime(text, true)).toBeTypeOf('number');
    },
  );

  it('keeps sub-millisecond digits and reads offsets and leap seconds', () => {
    expect(parseDateTime('2030-01-01 09:00:00,25+0100', true)).toBe(Date.parse('2030-01-01T08:00:00.25Z'));
    expect(parseDateTime('2030-01-01T09:00:00.0005Z')).toBe(Date.parse('2030-01-01T09:00:00Z') + 0.5);
    expect(parseDateTime('2030-06-30T23:59:60Z', true)).toBe(Date.parse('2030-07-01T00:00:00Z'));
  });
});

/**
 * A time zone's UTC offsets, read from the runtime's own time-zone data through `Intl.DateTimeFormat` (the only
 * Web-standard API that has it): no data of our own, so an update of the runtime's tzdata updates us.
 */
import { closest, invalidValue } from '../core/invalid-option.js';

/** The zone's UTC offset at an instant, in ms (`+3_600_000` for CET). Both in epoch milliseconds. */
export type OffsetAt = (instant: number) => number;

/** One formatter per zone, reused (creating one costs ~50x a format call); the 64 made last are kept. */
const zones = new Map<string, OffsetAt>();

/** The offsets of `timeZone`, or a `ValidationError` (with the closest IANA name, when one is close). */
export function offsetsOf(timeZone: string): OffsetAt {
  let offsetAt = zones.get(timeZone);
  if (offsetAt === undefined) {
    let format: (instant: number) => string;
    try {
      // en-US with numeric fields gives "3/28/2027 AD, 03:30:00" in every runtime; the era tells 1 BC from 1 AD.
      // Not a string (undefined would mean the runtime's own zone): '/' is no zone either.
      format = new Intl.DateTimeFormat('en-US', {
        timeZone: typeof timeZone === 'string' ? timeZone : '/',
        hourCycle: 'h23',
        era: 'short',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      }).format;
    } catch {
      return invalidValue('timeZone', timeZone, `, not a time zone this runtime knows: ${suggest(timeZone)}`);
    }
    offsetAt = (instant) => {
      const second = Math.floor(instant / 1000) * 1000;
      const text = format(second);
      const [month, day, year, hour, minute, seconds] = text.split(/\D+/);
      // Some engines wrote midnight as 24.
      return utc(text.includes('B') ? 1 - +year! : +year!, +month!, +day!, +hour! % 24, +minute!, +seconds!) - second;
    };
    if (zones.size === 64) zones.delete(zones.keys().next().value!);
    zones.set(timeZone, offsetAt);
  }
  return offsetAt;
}

/** The first instant after `low`, up to `high`, whose offset is not `before` (the offset at `low`): where the clocks change. */
export function changeAt(offsetAt: OffsetAt, low: number, high: number, before: number): number {
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (offsetAt(middle) === before) low = middle;
    else high = middle;
  }
  return high;
}

/**
 * `Date.UTC` of a proleptic Gregorian date and time (month 1 to 12), for any year: `Date.UTC` reads the years 0
 * to 99 as 1900 to 1999, so those (and earlier ones) are asked 400 years later, 146,097 days: one whole cycle of
 * the calendar.
 */
export function utc(year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0): number {
  const cycles = year < 100 ? 1 : 0;
  return Date.UTC(year + 400 * cycles, month - 1, day, hours, minutes, seconds) - cycles * 146_097 * 864e5;
}

/**
 * "did you mean …?" with the IANA name closest to `name` (or to its city part), when one is close enough. Not a
 * string (whose `toString` may throw): no name is close.
 */
function suggest(name: unknown): string {
  if (typeof name !== 'string') return 'pass an IANA name such as "Europe/Berlin".';
  const names = new Map<string, string>();
  for (const zone of Intl.supportedValuesOf?.('timeZone') ?? []) {
    names.set(zone, zone);
    const city = zone.slice(zone.lastIndexOf('/') + 1);
    if (!names.has(city)) names.set(city, zone);
  }
  const best = closest(name.replaceAll(' ', '_'), names.keys());
  return best ? `did you mean "${names.get(best)}"?` : suggest(undefined);
}

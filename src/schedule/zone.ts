/**
 * A time zone's UTC offsets, read from the runtime's own time-zone data through `Intl.DateTimeFormat` (the only
 * Web-standard API that has it): no data of our own, so an update of the runtime's tzdata updates us.
 */
import { invalidValue } from '../invalid-option.js';

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
      return invalidValue('timeZone', timeZone, `, not a time zone this runtime knows: ${suggest(String(timeZone))}`);
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

/**
 * `Date.UTC` of a proleptic Gregorian date and time (month 1 to 12), for any year: `Date.UTC` reads the years 0
 * to 99 as 1900 to 1999, so those (and earlier ones) are asked 400 years later, 146,097 days: one whole cycle of
 * the calendar.
 */
export function utc(year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0): number {
  const cycles = year < 100 ? 1 : 0;
  return Date.UTC(year + 400 * cycles, month - 1, day, hours, minutes, seconds) - cycles * 146_097 * 864e5;
}

/** "did you mean …?" with the IANA name closest to `name` (or to its city part), when one is close enough. */
function suggest(name: string): string {
  const key = (text: string) => text.toLowerCase().replaceAll(' ', '_');
  const asked = key(name);
  let best = '';
  let closest = Math.min(3, name.length / 3);
  for (const zone of Intl.supportedValuesOf?.('timeZone') ?? []) {
    for (const candidate of [zone, zone.slice(zone.lastIndexOf('/') + 1)]) {
      // Lengths this far apart are at least this far apart: a long name costs no distance table (1 MB took 80 s).
      if (Math.abs(asked.length - candidate.length) >= closest) continue;
      const found = distance(asked, key(candidate));
      if (found < closest) [best, closest] = [zone, found];
    }
  }
  return best ? `did you mean "${best}"?` : 'pass an IANA name such as "Europe/Berlin".';
}

/** Levenshtein distance: the fewest one-character insertions, deletions or substitutions from `a` to `b`. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (const char of a) {
    let diagonal = row[0]!++;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (char === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

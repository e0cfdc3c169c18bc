/**
 * A wall-clock time in a time zone → the instant it names, with exactly the semantics of Temporal's
 * `PlainDateTime.prototype.toZonedDateTime(timeZone, { disambiguation })` (TC39 Temporal, GetPossibleEpochNanoseconds
 * and DisambiguatePossibleEpochNanoseconds), in plain numbers: wall times are epoch milliseconds "as if UTC".
 */
import { checkOptions, invalidValue, optionNames, refusal } from '../core/invalid-option.js';
import { changeAt, offsetsOf, utc, type OffsetAt } from './zone.js';

/**
 * What to do with a wall time that does not exist (clocks jumped over it) or happens twice (clocks went back):
 * Temporal's four policies.
 * - `'compatible'` (the default, as Temporal, `Date` and RFC 5545): a skipped time is moved forward by the length
 *   of the jump (02:30 → 03:30 when clocks go from 02:00 to 03:00); a repeated time is the first of the two.
 * - `'earlier'`: the earlier instant (a skipped time moved back by the jump: 02:30 → 01:30).
 * - `'later'`: the later instant (a skipped time moved forward: 02:30 → 03:30; a repeated time, the second).
 * - `'reject'`: throw a `ValidationError` that says what the clocks do at that time.
 */
export type Disambiguation = 'compatible' | 'earlier' | 'later' | 'reject';

/** Options of {@link atLocalTime}. */
export interface AtLocalTimeOptions {
  /** For a time that does not exist or happens twice: `'compatible'` (default), `'earlier'`, `'later'` or `'reject'`. */
  disambiguation?: Disambiguation | undefined;
}

export const DAY = 864e5;

/** A wall time that has no single instant under `'reject'`: where the clocks change (an instant), and what to say. */
export type Refusal = [transition: number, message: string];

/**
 * The instant that wall time `wall` names in the zone, as Temporal chooses it, or the refusal under `'reject'`.
 * `zone` is the name used in the refusal's message.
 */
export function toInstant(offsetAt: OffsetAt, wall: number, policy: Disambiguation, zone: string): number | Refusal {
  const found = possible(offsetAt, wall);
  if (found.length === 1) return found[0]!;
  if (policy === 'reject') return refusalOf(offsetAt, wall, zone, found.length > 0);
  if (found.length > 0) return policy === 'later' ? found.at(-1)! : found[0]!;
  // Skipped: the wall time moved by the length of the jump, then resolved again (DisambiguatePossibleEpochNanoseconds).
  const jump = offsetAt(wall + DAY) - offsetAt(wall - DAY);
  return policy === 'earlier' ? possible(offsetAt, wall - jump)[0]! : possible(offsetAt, wall + jump).at(-1)!;
}

/**
 * Every instant whose wall time is `wall`: Temporal's GetNamedTimeZoneEpochNanoseconds tries the offsets a day
 * before and a day after, and keeps the ones that give back the same wall time. One, two (clocks went back) or none.
 */
function possible(offsetAt: OffsetAt, wall: number): number[] {
  const before = offsetAt(wall - DAY);
  const after = offsetAt(wall + DAY);
  return (before === after ? [before] : [before, after]).filter((offset) => offsetAt(wall - offset) === offset).map((offset) => wall - offset);
}

/** "02:30 does not exist in Europe/Berlin on 2027-03-28: clocks go from 02:00 to 03:00. …", with the change's instant. */
function refusalOf(offsetAt: OffsetAt, wall: number, zone: string, twice: boolean): Refusal {
  const before = offsetAt(wall - DAY);
  const after = offsetAt(wall + DAY);
  // The clocks change between the two readings of `wall`: the first millisecond of the new offset.
  const high = changeAt(offsetAt, wall - Math.max(before, after), wall - Math.min(before, after), before);
  const day = iso(wall).slice(0, 10);
  // "02:30", "02:30:15" or "02:30:15.250"; with the date when it is not the day asked for (a jump across midnight).
  const clock = (at: number) => iso(at).replace(day, '').slice(0, at % 1000 ? -1 : at % 6e4 ? -5 : -8).replace('T', ' ').trim();
  return [
    high,
    `${clock(wall)} ${twice ? 'happens twice' : 'does not exist'} in ${zone} on ${day}: clocks go ${twice ? 'back ' : ''}from ` +
      `${clock(high + before)} to ${clock(high + after)}. ` +
      (twice
        ? "Pass disambiguation 'earlier' or 'later' to pick the first or the second."
        : `Pick another time, or pass disambiguation 'compatible' (${clock(wall + after - before)}) or 'earlier' (${clock(wall + before - after)}).`),
  ];
}

/** A wall time (or instant) in ISO 8601: "2027-03-28T02:30:00.000Z". */
const iso = (at: number) => new Date(at).toISOString();

const LOCAL = /^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,3}))?)?(.*)$/;

/** Throws a `ValidationError` about the value being read: "`local` is "…": <problem>". */
type Fail = (problem: string) => never;

/** `local` ("2027-03-28T09:00") as a wall time (ms as if UTC), or a `ValidationError` that says what to write. */
export function parseLocal(local: string): number {
  return readWall(local, (problem) => invalidValue('local', local, problem), ': write the wall time as YYYY-MM-DDTHH:mm[:ss[.sss]].');
}

/** `time` ("09:00"), the `index`th of `times`, as milliseconds since midnight, or a `ValidationError`. */
export function parseTime(time: string, index: number): number {
  const fail: Fail = (problem) => invalidValue(`times[${index}]`, time, problem, ['times', index]);
  return readWall(`1970-01-01T${time}`, fail, ': write HH:mm or HH:mm:ss, such as "09:00".');
}

/** "YYYY-MM-DDTHH:mm[:ss[.sss]]" → ms as if UTC; calendar dates only, hours 00–23 (Temporal refuses 24:00 too). */
function readWall(text: string, fail: Fail, shape: string): number {
  const [, year, month, day, hours, minutes, seconds = '0', fraction = '', rest] = (typeof text === 'string' && LOCAL.exec(text)) || fail(shape);
  if (rest) fail(/^[Zz+-]|^\[/.test(rest) ? ', with an offset or zone: pass the wall time and the zone separately.' : shape);
  const date = utc(+year!, +month!, +day!);
  // Month 1 to 12, day 1 to the month's last (before the first of the next month).
  if (!(+day! > 0 && +month! > 0 && +month! < 13 && date < utc(+year!, +month! + 1, 1))) fail(`: ${text.slice(0, 10)} is not a date.`);
  if (+hours! > 23 || +minutes! > 59 || +seconds > 59) fail(': hours go from 00 to 23, minutes and seconds to 59 (24:00 is 00:00 of the next day).');
  return date + ((+hours! * 60 + +minutes!) * 60 + +seconds) * 1000 + +fraction.padEnd(3, '0');
}

const POLICIES: readonly Disambiguation[] = ['compatible', 'earlier', 'later', 'reject'];

/** The policy, `'compatible'` when not given; anything else is a `ValidationError`. */
export function checkPolicy(disambiguation: Disambiguation | undefined): Disambiguation {
  if (disambiguation === undefined) return 'compatible';
  if (!POLICIES.includes(disambiguation)) invalidValue('disambiguation', disambiguation, ": use 'compatible', 'earlier', 'later' or 'reject'.");
  return disambiguation;
}

/**
 * The instant of a wall-clock time in a time zone: what to send as `publish_at` when a user says
 * "Monday 09:00 in Berlin". The same instant as Temporal's
 * `Temporal.PlainDateTime.from(local).toZonedDateTime(timeZone, { disambiguation })`, on every runtime (it reads
 * the runtime's time-zone data through `Intl.DateTimeFormat`). In Berlin, `'2027-03-28T02:30'` does not exist
 * (clocks go from 02:00 to 03:00): `'compatible'` gives 03:30 CEST, `'earlier'` 01:30 CET. `'2027-10-31T02:30'`
 * happens twice (clocks go back from 03:00 to 02:00): `'compatible'` and `'earlier'` give the first, `'later'` the
 * second.
 *
 * @param local the wall time, `YYYY-MM-DDTHH:mm[:ss[.sss]]`, without a zone or offset
 * @param timeZone an IANA time zone name (`"Europe/Berlin"`)
 * @throws ValidationError for a malformed or impossible `local` (February 30, 24:00, a `Z` or offset in it), an
 *   unknown `timeZone` (with the closest name: "did you mean …?"), or, under `'reject'`, a time that does not
 *   exist or happens twice in that zone.
 *
 * @example
 * // The date and time the user picked, in their zone:
 * await client.posts.create({ account_ids, publish_at: atLocalTime(`${pickedDate}T${pickedTime}`, user.timeZone) });
 */
export function atLocalTime(local: string, timeZone: string, options: AtLocalTimeOptions = {}): Date {
  const wall = parseLocal(local);
  const { disambiguation } = checkOptions(options, optionNames<AtLocalTimeOptions>({ disambiguation: 0 }), 'atLocalTime()');
  const instant = toInstant(offsetsOf(timeZone), wall, checkPolicy(disambiguation), timeZone);
  if (typeof instant !== 'number') throw refusal(instant[1], ['local']);
  return new Date(instant);
}

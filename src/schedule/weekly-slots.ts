/** Recurring wall-clock slots ("Mon, Wed, Fri at 09:00 and 17:30 in New York") as instants, right across DST. */
import { checkOptions, invalidOption, invalidValue, optionNames, refusal } from '../core/invalid-option.js';
import { checkPolicy, DAY, parseTime, toInstant, type Disambiguation, type Refusal } from './local-time.js';
import { changeAt, offsetsOf, type OffsetAt } from './zone.js';

/** A day of the week, as `weeklySlots` takes it. */
export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

/** In the order of `Date.prototype.getUTCDay()`. */
const WEEKDAYS: readonly Weekday[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** Options of {@link weeklySlots}. Give `count`, `until` or both. */
export interface WeeklySlotsOptions {
  /** The IANA time zone the wall times are in (`"America/New_York"`). */
  timeZone: string;
  /** The days of the week, `'mon'` to `'sun'`; a day listed twice counts once. */
  days: readonly Weekday[];
  /** The wall times of each of those days, `"HH:mm"` or `"HH:mm:ss"` (`["09:00", "17:30"]`), in any order; a time listed twice counts once. */
  times: readonly string[];
  /** Slots strictly after this instant (so `from: lastSlot` continues a series without repeating it). Default: now. */
  from?: Date | undefined;
  /** How many slots at most. */
  count?: number | undefined;
  /** The last instant a slot may have (inclusive). */
  until?: Date | undefined;
  /**
   * For a slot whose wall time does not exist or happens twice that day: `'compatible'` (default), `'earlier'`,
   * `'later'` or `'reject'` (see {@link Disambiguation}). A slot that happens twice is yielded once, as the policy
   * picks it. Under `'reject'`, the iterator yields the slots before such a slot, then throws its `ValidationError`
   * (as Temporal's `toZonedDateTime` throws; it does not skip it).
   */
  disambiguation?: Disambiguation | undefined;
}

/**
 * The instants of a weekly schedule of wall-clock times, in order: each slot at its wall time in `timeZone`
 * across every DST change (never drifting by an hour as a schedule kept in UTC does). Lazy: a slot is computed
 * when the loop asks for it; `count` or `until` bounds the series. The slots are strictly after `from`.
 * Two slots that land on one instant (say 02:30, skipped and moved to 03:30, and 03:30) are yielded once.
 *
 * @throws ValidationError at the call for a bad option (unknown zone, empty `days` or `times`, a day or time
 *   that is not one, neither `count` nor `until`); under `'reject'`, from the loop at a slot that does not exist
 *   or happens twice.
 *
 * @example
 * for (const publish_at of weeklySlots({ timeZone: 'America/New_York', days: ['mon', 'wed', 'fri'], times: ['09:00', '17:30'], count: 30 })) {
 *   await client.posts.create({ account_ids, publish_at, text: nextDraft() });
 * }
 */
export function weeklySlots(options: WeeklySlotsOptions): Generator<Date, void, undefined> {
  const { timeZone, days, times, from = new Date(), until, disambiguation, count: asked } = checkOptions(options, OPTIONS, 'weeklySlots()');
  const offsetAt = sampled(offsetsOf(timeZone));
  const policy = checkPolicy(disambiguation);
  const weekdays = new Set(
    // Array.from, not map: a hole is read as undefined and refused (map skips it; days: [,] looked for 27 s, then yielded none).
    Array.from(nonEmpty(days, 'days', "['mon', 'wed', 'fri']"), (day, index) =>
      WEEKDAYS.includes(day) ? WEEKDAYS.indexOf(day) : invalidValue(`days[${index}]`, day, ": use 'mon', 'tue', 'wed', 'thu', 'fri', 'sat' or 'sun'.", ['days', index]),
    ),
  );
  const wallTimes = [...new Set(Array.from(nonEmpty(times, 'times', "['09:00', '17:30']"), parseTime))].sort((a, b) => a - b);
  // Without `until`, a missing count is NaN: refused, as a weekly schedule has no end of its own.
  const count = asked ?? (until === undefined ? NaN : Infinity);
  if (!(count >= 0 && (Number.isInteger(count) || count === Infinity))) {
    invalidValue('count', asked, ': pass `count` (how many slots, 0 or more) or `until` (a Date), or both; a weekly schedule has no end of its own.');
  }
  return slots(offsetAt, timeZone, policy, weekdays, wallTimes, instant(from, 'from'), until === undefined ? Infinity : instant(until, 'until'), count);
}

const OPTIONS = /* @__PURE__ */ optionNames<WeeklySlotsOptions>({ timeZone: 0, days: 0, times: 0, from: 0, count: 0, until: 0, disambiguation: 0 });

/** How far apart the zone's offset is read: no zone changes its offset twice within 6 hours. */
const STEP = 6 * 36e5;

/**
 * `offsetAt`, read every 6 hours rather than at every instant asked: between two equal readings the offset is
 * theirs; between two that differ, it changes once, at the instant found by bisection. So a day of 86,400 slot
 * times costs four readings, not three per time (the first slot came after a million, 2 s). The last 64 readings
 * and changes are kept.
 */
function sampled(offsetAt: OffsetAt): OffsetAt {
  const readings = new Map<number, number>();
  const changes = new Map<number, number>();
  const read = (at: number) => remember(readings, at, () => offsetAt(at));
  return (instant) => {
    const start = Math.floor(instant / STEP) * STEP;
    const before = read(start);
    const after = read(start + STEP);
    const change = before === after ? start : remember(changes, start, () => changeAt(offsetAt, start, start + STEP, before));
    return instant < change ? before : after;
  };
}

/** `map`'s value for `key`, computed and kept (the 64 kept last) when it has none. */
function remember(map: Map<number, number>, key: number, compute: () => number): number {
  let value = map.get(key);
  if (value === undefined) {
    if (map.size === 64) map.delete(map.keys().next().value!);
    map.set(key, (value = compute()));
  }
  return value;
}

function* slots(
  offsetAt: OffsetAt,
  zone: string,
  policy: Disambiguation,
  weekdays: ReadonlySet<number>,
  wallTimes: readonly number[],
  from: number,
  until: number,
  count: number,
): Generator<Date, void, undefined> {
  // A slot's instant is its wall time (as if UTC) minus an offset of at most ±16 h, moved by at most a day when
  // it falls in a gap: it lies within 40 h of its wall time. So the days are computed from 3 days before `from`,
  // and a slot is yielded only once every slot of the next day is known to come later (slots of one day, or of
  // two days around a gap the policy moves, can come out of wall-time order).
  const pending: number[] = [];
  let refused: Refusal | undefined;
  let last = -Infinity; // the slot yielded last: one instant found twice is yielded once
  for (let day = Math.floor(from / DAY) * DAY - 3 * DAY; ; day += DAY) {
    // A Date holds ±8.64e15 ms; within 3 days of either end an offset read around a slot (±1 day, ±16 h) can fall
    // outside it: those days have no slots, and past the last one the series ends.
    const edge = Math.abs(day) > 8.64e15 - 3 * DAY;
    const end = edge && day > 0;
    // A slot lies within 40 h of its wall time: a day whose last slot is that far before `from` has none after it.
    if (!edge && day + wallTimes.at(-1)! + 40 * 36e5 > from && weekdays.has(new Date(day).getUTCDay())) {
      for (const time of wallTimes) {
        const at = toInstant(offsetAt, day + time, policy, zone);
        if (typeof at !== 'number') {
          // Under 'reject' every slot keeps its wall-time order, and this one sits where the clocks change.
          if (at[0] > from) refused ??= at;
        } else if (at > from) pending.push(at);
      }
      pending.sort((a, b) => a - b);
    }
    const later = end ? Infinity : refused === undefined ? day - DAY : refused[0]; // every slot still to come is at or after this
    let next = 0; // read by index and dropped once per day: shift() per slot is quadratic in a long list of times
    for (; next < pending.length && pending[next]! < later; next++) {
      if (pending[next] === last) continue;
      if (count === 0 || pending[next]! > until) return;
      count -= 1;
      yield new Date((last = pending[next]!));
    }
    pending.splice(0, next);
    if (count === 0 || later > until || end) return;
    if (refused !== undefined) throw refusal(refused[1], ['times']);
  }
}

/** `value` when it is a non-empty array; otherwise a `ValidationError` about `name`. */
function nonEmpty<T>(value: readonly T[], name: string, example: string): readonly T[] {
  if (!Array.isArray(value) || value.length === 0) invalidOption(name, `must list at least one, such as ${example}.`);
  return value;
}

/** The epoch milliseconds of a valid `Date`; otherwise a `ValidationError` about `name`. */
function instant(value: Date, name: string): number {
  const time = value instanceof Date ? value.getTime() : NaN;
  return Number.isNaN(time) ? invalidOption(name, 'must be a valid Date.') : time;
}

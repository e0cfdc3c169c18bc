/**
 * weeklySlots across a whole year, in zones with DST (Berlin, New York, Lord Howe with its 30-minute shift,
 * Santiago with its changes at midnight) and without (Kolkata): every slot at its wall time (or the policy's
 * resolution of a skipped one), none missing, none doubled, in order. The expected series is built with the
 * Temporal polyfill, one PlainDateTime at a time.
 */
import { Temporal } from '@js-temporal/polyfill';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '@postsched/sdk';
import { weeklySlots, type Disambiguation, type Weekday } from '@postsched/sdk/schedule';

const ALL_DAYS: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const FROM = new Date('2027-01-01T00:00:00Z');
const UNTIL = new Date('2028-01-01T00:00:00Z');

/** Per zone: a time its 2027 clock change skips, one it repeats, and an ordinary one. */
const ZONES: Array<{ zone: string; skip?: string; repeat?: string; times: string[] }> = [
  // Last Sundays of March and October: 02:00 → 03:00, 03:00 → 02:00.
  { zone: 'Europe/Berlin', skip: '02:30', repeat: '02:30', times: ['09:00', '02:30', '17:30'] },
  // Second Sunday of March, first of November: 02:00 → 03:00, 02:00 → 01:00.
  { zone: 'America/New_York', skip: '02:30', repeat: '01:30', times: ['02:30', '01:30', '09:00'] },
  // First Sunday of April and October, by 30 minutes: 02:00 → 01:30, 02:00 → 02:30.
  { zone: 'Australia/Lord_Howe', skip: '02:15', repeat: '01:45', times: ['01:45', '02:15', '18:00'] },
  // At midnight: Saturday 24:00 → Sunday 01:00 in September, Sunday 00:00 → Saturday 23:00 in April.
  { zone: 'America/Santiago', skip: '00:30', repeat: '23:30', times: ['00:30', '23:30', '12:00'] },
  { zone: 'Asia/Kolkata', times: ['09:00', '02:30', '17:30'] },
];

/** What the slots must be: each day's PlainDateTime resolved by the polyfill, sorted, each instant once, in range. */
function expectedSlots(zone: string, days: readonly Weekday[], times: readonly string[], disambiguation: Disambiguation): number[] {
  const instants = new Set<number>();
  // From a few days before, as a policy may move a slot across midnight.
  for (let date = Temporal.PlainDate.from('2026-12-28'); Temporal.PlainDate.compare(date, Temporal.PlainDate.from('2028-01-03')) < 0; date = date.add({ days: 1 })) {
    if (!days.includes(ALL_DAYS[date.dayOfWeek - 1]!)) continue;
    for (const time of times) {
      const at = date.toPlainDateTime(Temporal.PlainTime.from(time)).toZonedDateTime(zone, { disambiguation }).epochMilliseconds;
      if (at > FROM.getTime() && at <= UNTIL.getTime()) instants.add(at);
    }
  }
  return [...instants].sort((a, b) => a - b);
}

const wallTime = (at: number, zone: string) => Temporal.Instant.fromEpochMilliseconds(at).toZonedDateTimeISO(zone).toPlainTime().toString({ smallestUnit: 'minute' });

/** The two instants of `time` on the day of 2027 it happens twice in `zone`. */
function happensTwice(zone: string, time: string): [number, number] {
  for (let date = Temporal.PlainDate.from('2027-01-01'); date.year === 2027; date = date.add({ days: 1 })) {
    const local = date.toPlainDateTime(Temporal.PlainTime.from(time));
    const [first, second] = (['earlier', 'later'] as const).map((d) => local.toZonedDateTime(zone, { disambiguation: d }).epochMilliseconds);
    // Different instants both at `time`: repeated (in a gap, 'earlier' and 'later' differ too, at other wall times).
    if (first !== second && wallTime(first!, zone) === time && wallTime(second!, zone) === time) return [first!, second!];
  }
  throw new Error(`${time} never happens twice in ${zone} in 2027`);
}


describe('weeklySlots over 2027, every day, at times the clock changes skip and repeat', () => {
  for (const { zone, skip, repeat, times } of ZONES) {
    for (const disambiguation of ['compatible', 'earlier', 'later'] as const) {
      it(`${zone}, ${disambiguation}: every slot at its wall time, none missing, none doubled, in order`, () => {
        const slots = [...weeklySlots({ timeZone: zone, days: ALL_DAYS, times, from: FROM, until: UNTIL, disambiguation })].map((d) => d.getTime());
        expect(slots).toEqual(expectedSlots(zone, ALL_DAYS, times, disambiguation));
        expect(slots.every((at, i) => i === 0 || at > slots[i - 1]!)).toBe(true);

        const walls = slots.map((at) => wallTime(at, zone));
        // Every time of every day is there, at its wall time, but the skipped one on the day of the jump: it is
        // at the policy's resolution (another wall time), or on the very slot it resolved to (yielded once).
        for (const time of times) expect(walls.filter((wall) => wall === time).length, time).toBe(time === skip ? 364 : 365);
        const resolved = walls.filter((wall) => !times.includes(wall));
        expect(resolved.length + (365 * times.length - slots.length)).toBe(skip === undefined ? 0 : 1);
        // The repeated time is yielded once on the day it happens twice: 365 above, and the right one of the two.
        if (repeat !== undefined) {
          const [first, second] = happensTwice(zone, repeat);
          expect([first, second].filter((at) => slots.includes(at))).toEqual([disambiguation === 'later' ? second : first]);
        }
      });
    }
  }

  it('Europe/Berlin: a skipped slot moved onto another slot (02:30 → 03:30 beside 03:30) is yielded once', () => {
    const slots = [...weeklySlots({ timeZone: 'Europe/Berlin', days: ['sun'], times: ['02:30', '03:30'], from: new Date('2027-03-27T00:00:00Z'), count: 3 })];
    expect(slots.map((d) => d.toISOString())).toEqual(['2027-03-28T01:30:00.000Z', '2027-04-04T00:30:00.000Z', '2027-04-04T01:30:00.000Z']);
  });

  it("America/Santiago, 'earlier': a skipped 00:30 moved back to Saturday 23:30 comes before Saturday's 23:45", () => {
    // 2027-09-05 (Sunday) 00:00 → 01:00: 'earlier' resolves Sunday 00:30 to Saturday 23:30 (-04), before 23:45.
    const slots = [...weeklySlots({ timeZone: 'America/Santiago', days: ['sat', 'sun'], times: ['00:30', '23:45'], from: new Date('2027-09-04T12:00:00Z'), count: 3, disambiguation: 'earlier' })];
    expect(slots.map((d) => d.toISOString())).toEqual(expectedSlots('America/Santiago', ['sat', 'sun'], ['00:30', '23:45'], 'earlier').filter((at) => at > Date.parse('2027-09-04T12:00:00Z')).slice(0, 3).map((at) => new Date(at).toISOString()));
    expect(slots.map((d) => d.getTime())).toEqual([...slots.map((d) => d.getTime())].sort((a, b) => a - b));
  });
});

describe('weeklySlots: bounds, duplicates, laziness and the reject policy', () => {
  const berlin = { timeZone: 'Europe/Berlin', days: ['mon'] as Weekday[], times: ['09:00'] };
  const monday = new Date('2027-01-04T08:00:00Z'); // Monday 09:00 CET

  it('starts strictly after `from` (so `from: lastSlot` continues a series) and ends at `until`, inclusive', () => {
    const iso = (options: Parameters<typeof weeklySlots>[0]) => [...weeklySlots(options)].map((d) => d.toISOString());
    expect(iso({ ...berlin, from: monday, count: 2 })).toEqual(['2027-01-11T08:00:00.000Z', '2027-01-18T08:00:00.000Z']);
    expect(iso({ ...berlin, from: new Date(monday.getTime() - 1), until: new Date('2027-01-18T08:00:00Z') })).toEqual([
      '2027-01-04T08:00:00.000Z',
      '2027-01-11T08:00:00.000Z',
      '2027-01-18T08:00:00.000Z',
    ]);
    // Both: whichever comes first.
    expect(iso({ ...berlin, from: monday, count: 5, until: new Date('2027-01-12T00:00:00Z') })).toEqual(['2027-01-11T08:00:00.000Z']);
    expect(iso({ ...berlin, from: monday, count: 0 })).toEqual([]);
    expect(iso({ ...berlin, from: monday, until: monday })).toEqual([]);
  });

  it('counts a day or a time listed twice once, and takes times in any order', () => {
    const slots = [...weeklySlots({ timeZone: 'Europe/Berlin', days: ['wed', 'mon', 'mon'], times: ['17:30', '09:00', '09:00'], from: monday, count: 4 })];
    expect(slots.map((d) => d.toISOString())).toEqual([
      '2027-01-04T16:30:00.000Z',
      '2027-01-06T08:00:00.000Z',
      '2027-01-06T16:30:00.000Z',
      '2027-01-11T08:00:00.000Z',
    ]);
  });

  it('defaults `from` to now, and computes slots only as the loop asks (count: Infinity never ends)', () => {
    const before = Date.now();
    const series = weeklySlots({ timeZone: 'Asia/Kolkata', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], times: ['09:00'], count: Infinity });
    const first = series.next().value as Date;
    const second = series.next().value as Date;
    expect(first.getTime()).toBeGreaterThan(before);
    expect(first.getTime()).toBeLessThanOrEqual(before + 864e5);
    expect(second.getTime() - first.getTime()).toBe(864e5); // no DST in Kolkata: exactly a day apart
    expect(series.return(undefined).done).toBe(true);
  });

  it('ends at the last day a Date can hold, rather than looking for slots forever', () => {
    const series = [...weeklySlots({ timeZone: 'UTC', days: ['sat'], times: ['00:00'], from: new Date(8.64e15 - 30 * 864e5), count: 10 })];
    expect(series.map((d) => d.toISOString())).toEqual(['+275760-08-16T00:00:00.000Z', '+275760-08-23T00:00:00.000Z', '+275760-08-30T00:00:00.000Z', '+275760-09-06T00:00:00.000Z']);
  });

  it('near either end of what a Date holds, in zones far from UTC: slots, never a RangeError', () => {
    const everyDay: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
    // Kiritimati is UTC+14: a slot's wall time there passes the last instant a Date holds before the slot does.
    const last = [...weeklySlots({ timeZone: 'Pacific/Kiritimati', days: everyDay, times: ['23:59'], from: new Date(8.64e15 - 10 * 864e5), count: 30 })];
    expect(last.length).toBeGreaterThan(0);
    expect(last.map((d) => d.toISOString()).at(-1)).toMatch(/^\+275760-09-/);
    for (const timeZone of ['UTC', 'Europe/Berlin', 'Etc/GMT+12']) {
      const first = [...weeklySlots({ timeZone, days: everyDay, times: ['00:00', '12:00'], from: new Date(-8.64e15), count: 3 })];
      expect(first).toHaveLength(3);
      expect(first.every((d, i) => d.getTime() > -8.64e15 && (i === 0 || d > first[i - 1]!))).toBe(true);
    }
  });

  it('a day of times, one a second (86,400 of them): in seconds, every slot once and in order', () => {
    const times = Array.from({ length: 86_400 }, (_, s) => new Date(s * 1000).toISOString().slice(11, 19));
    const started = performance.now();
    const slots = [...weeklySlots({ timeZone: 'Europe/Berlin', days: ALL_DAYS, times, from: new Date('2027-03-27T23:00:00Z'), until: new Date('2027-03-28T22:00:00Z') })];
    // Sunday 28 March 2027 in Berlin, whose night skips 02:00 to 03:00: those 3,600 times land on 03:00 to 04:00,
    // each instant yielded once.
    expect(slots).toHaveLength(86_400 - 3_600);
    expect(slots.every((d, i) => i === 0 || d > slots[i - 1]!)).toBe(true);
    expect(performance.now() - started).toBeLessThan(30_000); // 67 s (9 s now): every slot was looked up among the pending ones
  }, 120_000);

  it("'reject': yields every slot before one that does not exist, then throws its ValidationError", () => {
    const series = weeklySlots({ timeZone: 'Europe/Berlin', days: ['sun'], times: ['02:30', '01:00'], from: new Date('2027-03-14T12:00:00Z'), count: 10, disambiguation: 'reject' });
    const seen: string[] = [];
    let error: unknown;
    try {
      for (const at of series) seen.push(at.toISOString());
    } catch (caught) {
      error = caught;
    }
    expect(seen).toEqual(['2027-03-21T00:00:00.000Z', '2027-03-21T01:30:00.000Z', '2027-03-28T00:00:00.000Z']);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toMatch(/^02:30 does not exist in Europe\/Berlin on 2027-03-28: clocks go from 02:00 to 03:00\./);
    expect((error as ValidationError).path).toEqual(['times']);
  });

  it("'reject': a slot that happens twice throws too; one before `from` or after `until` does not", () => {
    const options = { timeZone: 'Europe/Berlin', days: ['sun'] as Weekday[], times: ['02:30'], disambiguation: 'reject' as const };
    expect(() => [...weeklySlots({ ...options, from: new Date('2027-10-30T00:00:00Z'), count: 1 })]).toThrow(/^02:30 happens twice in Europe\/Berlin on 2027-10-31: clocks go back from 03:00 to 02:00\./);
    expect([...weeklySlots({ ...options, from: new Date('2027-03-28T12:00:00Z'), count: 1 })].map((d) => d.toISOString())).toEqual(['2027-04-04T00:30:00.000Z']);
    expect([...weeklySlots({ ...options, from: new Date('2027-03-14T12:00:00Z'), until: new Date('2027-03-27T00:00:00Z') })].map((d) => d.toISOString())).toEqual(['2027-03-21T01:30:00.000Z']);
  });
});

/**
 * One Intl.DateTimeFormat per zone, reused by every conversion in that zone (creating one costs about fifty
 * format calls), and a bounded cache: an app converting for users in hundreds of zones keeps 64 formatters.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { atLocalTime, weeklySlots } from '@postsched/sdk/schedule';

const Original = Intl.DateTimeFormat;
let made = 0;
let formatted = 0;

beforeEach(() => {
  made = 0;
  formatted = 0;
  const counting = new Proxy(Original, {
    construct(target, args: ConstructorParameters<typeof Intl.DateTimeFormat>) {
      made += 1;
      const formatter = Reflect.construct(target, args) as Intl.DateTimeFormat;
      const format = formatter.format;
      // Each read of the zone's offset is one format call.
      Object.defineProperty(formatter, 'format', { value: (date?: number | Date) => ((formatted += 1), format(date)) });
      return formatter;
    },
  });
  Object.defineProperty(Intl, 'DateTimeFormat', { value: counting, writable: true, configurable: true });
});
afterEach(() => Object.defineProperty(Intl, 'DateTimeFormat', { value: Original, writable: true, configurable: true }));

it('creates one formatter for a zone, whatever the number of conversions and slots in it', () => {
  for (let day = 1; day <= 28; day++) atLocalTime(`2031-02-${String(day).padStart(2, '0')}T09:00`, 'Europe/Berlin');
  expect([...weeklySlots({ timeZone: 'Europe/Berlin', days: ['mon'], times: ['09:00'], from: new Date(0), count: 52 })]).toHaveLength(52);
  expect(made).toBe(1);
});

it('keeps the 64 formatters made last, and makes the one it dropped again when asked', () => {
  atLocalTime('2031-02-03T09:00', 'Europe/Berlin'); // made now, or cached by the test above: the oldest either way
  const before = made;
  const zones = Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'Europe/Berlin').slice(0, 64);
  for (const zone of zones) atLocalTime('2031-02-03T09:00', zone);
  expect(made).toBe(before + 64); // 65 zones in all: one too many
  atLocalTime('2031-02-03T09:00', zones.at(-1)!);
  expect(made).toBe(before + 64);
  atLocalTime('2031-02-03T09:00', 'Europe/Berlin'); // the first made, dropped to make room
  expect(made).toBe(before + 65);
});

it('the first of 86,400 slots a day comes after a few dozen readings of the zone, not three per time of every day before it', () => {
  const times = Array.from({ length: 86_400 }, (_, s) => new Date(s * 1000).toISOString().slice(11, 19));
  const all = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
  const series = weeklySlots({ timeZone: 'America/Chicago', days: all, times, from: new Date('2027-03-14T07:59:59.500Z'), count: 2 });
  // Sunday 14 March 2027 in Chicago: clocks go from 02:00 to 03:00 (08:00 UTC); 02:00:00 is moved to 03:00:00.
  expect(series.next().value?.toISOString()).toBe('2027-03-14T08:00:00.000Z');
  expect(formatted).toBeLessThan(100); // 1,000,000 and more (2 s) when every time of 4 days was read three times
  expect(series.next().value?.toISOString()).toBe('2027-03-14T08:00:01.000Z');
});

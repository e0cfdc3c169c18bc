/**
 * One Intl.DateTimeFormat per zone, reused by every conversion in that zone (creating one costs about fifty
 * format calls), and a bounded cache: an app converting for users in hundreds of zones keeps 64 formatters.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { atLocalTime, weeklySlots } from '@postsched/sdk/schedule';

const Original = Intl.DateTimeFormat;
let made = 0;

beforeEach(() => {
  made = 0;
  const counting = new Proxy(Original, {
    construct(target, args: ConstructorParameters<typeof Intl.DateTimeFormat>) {
      made += 1;
      return Reflect.construct(target, args) as Intl.DateTimeFormat;
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

/**
 * Bad input to @postsched/sdk/schedule: a ValidationError (the main entry's class) whose message names the
 * field and the fix, and whose `path` names the field, thrown at the call, before anything is computed.
 */
import { describe, expect, it } from 'vitest';
import { PostSchedError, ValidationError } from '@postsched/sdk';
import { atLocalTime, weeklySlots, type WeeklySlotsOptions } from '@postsched/sdk/schedule';

/** The ValidationError `run` throws. */
function refusal(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toBeInstanceOf(PostSchedError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('atLocalTime: bad input', () => {
  it.each([
    ['Europe/Berlim', 'did you mean "Europe/Berlin"?'],
    ['europe/berlim', 'did you mean "Europe/Berlin"?'],
    ['Berlin', 'did you mean "Europe/Berlin"?'],
    ['America/New York', 'did you mean "America/New_York"?'],
    ['America/NewYork', 'did you mean "America/New_York"?'],
  ])('an unknown zone %j: suggests the closest IANA name', (zone, suggestion) => {
    const error = refusal(() => atLocalTime('2027-03-29T09:00', zone));
    expect(error.message).toBe(`\`timeZone\` is ${JSON.stringify(zone)}, not a time zone this runtime knows: ${suggestion}`);
    expect(error.path).toEqual(['timeZone']);
  });

  it.each([['Mars/Olympus_Mons'], ['xyz'], [''], [undefined], [42]])('an unknown zone %j with nothing close: says what to pass', (zone) => {
    const error = refusal(() => atLocalTime('2027-03-29T09:00', zone as string));
    expect(error.message).toMatch(/^`timeZone` is .*, not a time zone this runtime knows: pass an IANA name such as "Europe\/Berlin"\.$/);
  });

  it('an unknown zone of a megabyte: refused at once (the closest name is not looked for letter by letter)', () => {
    const started = performance.now();
    for (const zone of ['x'.repeat(1_000_000), `Europe/${'B'.repeat(100_000)}`]) {
      expect(refusal(() => atLocalTime('2027-03-29T09:00', zone)).message).toMatch(/not a time zone this runtime knows: pass an IANA name such as "Europe\/Berlin"\.$/);
    }
    expect(performance.now() - started).toBeLessThan(2_000); // 2 minutes
  });

  it.each(['2027-03-28T02:30Z', '2027-03-28T02:30:00z', '2027-03-28T02:30+02:00', '2027-03-28T02:30:00.000-05:00', '2027-03-28T02:30[Europe/Berlin]'])(
    'a local time with a zone or offset, %j: says to pass the wall time and the zone separately',
    (local) => {
      const error = refusal(() => atLocalTime(local, 'Europe/Berlin'));
      expect(error.message).toBe(`\`local\` is ${JSON.stringify(local)}, with an offset or zone: pass the wall time and the zone separately.`);
      expect(error.path).toEqual(['local']);
    },
  );

  it.each(['2027-03-28', '2027-03-28T9:00', '2027-3-28T09:00', '28.03.2027 09:00', '2027-03-28T09:00:00.1234', '2027-03-28T09:00 ', '', 'tomorrow'])(
    'a malformed local time %j: shows the shape to write',
    (local) => {
      expect(refusal(() => atLocalTime(local, 'Europe/Berlin')).message).toBe(
        `\`local\` is ${JSON.stringify(local)}: write the wall time as YYYY-MM-DDTHH:mm[:ss[.sss]].`,
      );
    },
  );

  it('a local time that is not a string: says its type', () => {
    expect(refusal(() => atLocalTime(new Date() as never, 'Europe/Berlin')).message).toMatch(/^`local` is of type object: write the wall time as YYYY-MM-DDTHH:mm/);
    expect(refusal(() => atLocalTime(undefined as never, 'Europe/Berlin')).message).toMatch(/^`local` is undefined: write the wall time/);
  });

  it.each(['2027-02-30T09:00', '2027-02-29T09:00', '2027-13-01T09:00', '2027-00-10T09:00', '2027-04-31T09:00', '2027-01-00T09:00'])(
    'a date that is not in the calendar, %j',
    (local) => {
      expect(refusal(() => atLocalTime(local, 'Europe/Berlin')).message).toBe(`\`local\` is ${JSON.stringify(local)}: ${local.slice(0, 10)} is not a date.`);
    },
  );

  it('accepts 29 February of a leap year, and the years 0000 to 9999', () => {
    expect(atLocalTime('2028-02-29T12:00', 'UTC').toISOString()).toBe('2028-02-29T12:00:00.000Z');
    expect(atLocalTime('0000-01-01T00:00', 'UTC').toISOString()).toBe('0000-01-01T00:00:00.000Z');
    expect(atLocalTime('9999-12-31T23:59:59.999', 'UTC').toISOString()).toBe('9999-12-31T23:59:59.999Z');
  });

  it.each(['2027-03-28T24:00', '2027-03-28T25:00', '2027-03-28T09:60', '2027-03-28T09:00:60'])('a time of day out of range, %j (24:00 too, as Temporal)', (local) => {
    expect(refusal(() => atLocalTime(local, 'Europe/Berlin')).message).toBe(
      `\`local\` is ${JSON.stringify(local)}: hours go from 00 to 23, minutes and seconds to 59 (24:00 is 00:00 of the next day).`,
    );
  });

  it("'reject' and a time that does not exist: says what the clocks do and how to fix it", () => {
    const error = refusal(() => atLocalTime('2027-03-28T02:30', 'Europe/Berlin', { disambiguation: 'reject' }));
    expect(error.message).toBe(
      "02:30 does not exist in Europe/Berlin on 2027-03-28: clocks go from 02:00 to 03:00. Pick another time, or pass disambiguation 'compatible' (03:30) or 'earlier' (01:30).",
    );
    expect(error.path).toEqual(['local']);
  });

  it("'reject' and a time that happens twice: says so and how to pick one", () => {
    expect(refusal(() => atLocalTime('2027-10-31T02:30', 'Europe/Berlin', { disambiguation: 'reject' })).message).toBe(
      "02:30 happens twice in Europe/Berlin on 2027-10-31: clocks go back from 03:00 to 02:00. Pass disambiguation 'earlier' or 'later' to pick the first or the second.",
    );
    // Lord Howe moves by 30 minutes; seconds and milliseconds of the asked time are kept in the message.
    expect(refusal(() => atLocalTime('2027-04-04T01:45:30.250', 'Australia/Lord_Howe', { disambiguation: 'reject' })).message).toMatch(
      /^01:45:30\.250 happens twice in Australia\/Lord_Howe on 2027-04-04: clocks go back from 02:00 to 01:30\./,
    );
  });

  it("'reject' across midnight: the message dates the clock times that are not on the day asked for", () => {
    // Samoa skipped 30 December 2011: clocks went from 29 December 24:00 (-10:00) to 31 December 00:00 (+14:00).
    expect(refusal(() => atLocalTime('2011-12-30T09:00', 'Pacific/Apia', { disambiguation: 'reject' })).message).toBe(
      "09:00 does not exist in Pacific/Apia on 2011-12-30: clocks go from 00:00 to 2011-12-31 00:00. Pick another time, or pass disambiguation 'compatible' (2011-12-31 09:00) or 'earlier' (2011-12-29 09:00).",
    );
  });

  it.each([['sometimes'], ['Earlier'], [null], [1]])('an unknown disambiguation %j: lists the four', (disambiguation) => {
    const error = refusal(() => atLocalTime('2027-03-28T09:00', 'Europe/Berlin', { disambiguation: disambiguation as never }));
    expect(error.message).toMatch(/^`disambiguation` is .*: use 'compatible', 'earlier', 'later' or 'reject'\.$/);
    expect(error.path).toEqual(['disambiguation']);
  });

  it('never echoes more than 64 characters of the input, and escapes control characters', () => {
    const message = refusal(() => atLocalTime(`2027-03-28T09:00\n${'x'.repeat(500)}`, 'Europe/Berlin')).message;
    expect(message).not.toContain('\n');
    expect(message.length).toBeLessThan(200);
  });
});

describe('weeklySlots: bad options, refused at the call', () => {
  const good: WeeklySlotsOptions = { timeZone: 'America/New_York', days: ['mon', 'wed'], times: ['09:00'], count: 3 };

  it.each<[string, Partial<Record<keyof WeeklySlotsOptions, unknown>>, string, Array<string | number>]>([
    ['empty days', { days: [] }, "`days` must list at least one, such as ['mon', 'wed', 'fri'].", ['days']],
    ['days not an array', { days: 'mon' }, "`days` must list at least one, such as ['mon', 'wed', 'fri'].", ['days']],
    ['a full day name', { days: ['mon', 'Wednesday'] }, '`days[1]` is "Wednesday": use \'mon\', \'tue\', \'wed\', \'thu\', \'fri\', \'sat\' or \'sun\'.', ['days', 1]],
    ['empty times', { times: [] }, "`times` must list at least one, such as ['09:00', '17:30'].", ['times']],
    ['a time without its leading zero', { times: ['09:00', '9:30'] }, '`times[1]` is "9:30": write HH:mm or HH:mm:ss, such as "09:00".', ['times', 1]],
    ['24:00', { times: ['24:00'] }, '`times[0]` is "24:00": hours go from 00 to 23, minutes and seconds to 59 (24:00 is 00:00 of the next day).', ['times', 0]],
    ['neither count nor until', { count: undefined }, '`count` is undefined: pass `count` (how many slots, 0 or more) or `until` (a Date), or both; a weekly schedule has no end of its own.', ['count']],
    ['a negative count', { count: -1 }, '`count` is -1: pass `count` (how many slots, 0 or more) or `until` (a Date), or both; a weekly schedule has no end of its own.', ['count']],
    ['a fractional count', { count: 2.5 }, '`count` is 2.5: pass `count` (how many slots, 0 or more) or `until` (a Date), or both; a weekly schedule has no end of its own.', ['count']],
    ['a count as a string', { count: '3' }, '`count` is "3": pass `count` (how many slots, 0 or more) or `until` (a Date), or both; a weekly schedule has no end of its own.', ['count']],
    ['a count as a BigInt', { count: 3n }, '`count` is 3: pass `count` (how many slots, 0 or more) or `until` (a Date), or both; a weekly schedule has no end of its own.', ['count']],
    ['a hole in days (a loop that never found a day)', { days: [, 'mon'] }, '`days[0]` is undefined: use \'mon\', \'tue\', \'wed\', \'thu\', \'fri\', \'sat\' or \'sun\'.', ['days', 0]],
    ['a hole in times', { times: ['09:00', ,] }, '`times[1]` is undefined: write HH:mm or HH:mm:ss, such as "09:00".', ['times', 1]],
    ['an invalid from', { from: new Date('not a date') }, '`from` must be a valid Date.', ['from']],
    ['until as a string', { until: '2027-12-31' }, '`until` must be a valid Date.', ['until']],
    ['an unknown zone', { timeZone: 'America/New_Yrok' }, '`timeZone` is "America/New_Yrok", not a time zone this runtime knows: did you mean "America/New_York"?', ['timeZone']],
    ['an unknown policy', { disambiguation: 'skip' }, "`disambiguation` is \"skip\": use 'compatible', 'earlier', 'later' or 'reject'.", ['disambiguation']],
  ])('%s', (_name, change, message, path) => {
    const error = refusal(() => weeklySlots({ ...good, ...change } as WeeklySlotsOptions));
    expect(error.message).toBe(message);
    expect(error.path).toEqual(path);
  });
});

describe('hostile options: a ValidationError, never a TypeError, and never an option read from Object.prototype', () => {
  const good: WeeklySlotsOptions = { timeZone: 'America/New_York', days: ['mon'], times: ['09:00'], count: 1, from: new Date('2027-03-01T00:00:00Z') };
  const throwing = new Proxy({}, { ownKeys: () => { throw new Error('secret-in-trap'); } });
  const getter = Object.defineProperty({ ...good }, 'count', { enumerable: true, get: () => { throw new Error('secret-in-getter'); } });

  it.each<[string, () => unknown, string, Array<string | number>]>([
    ['atLocalTime(local, zone, null)', () => atLocalTime('2027-03-29T09:00', 'Europe/Berlin', null as never), '`options` must be an object: the options of atLocalTime().', ['options']],
    ['weeklySlots(undefined)', () => weeklySlots(undefined as never), '`options` must be an object: the options of weeklySlots().', ['options']],
    ['weeklySlots(a Proxy whose traps throw)', () => weeklySlots(throwing as never), '`options` of weeklySlots() could not be read (a getter or Proxy threw): pass a plain object.', []],
    ['weeklySlots(a throwing getter)', () => weeklySlots(getter), '`options` of weeklySlots() could not be read (a getter or Proxy threw): pass a plain object.', []],
    ['atLocalTime(…, a throwing getter)', () => atLocalTime('2027-03-29T09:00', 'Europe/Berlin', { get disambiguation(): never { throw new Error('x'); } }), '`options` of atLocalTime() could not be read (a getter or Proxy threw): pass a plain object.', []],
    ['a time zone whose toString throws', () => atLocalTime('2027-03-29T09:00', { toString() { throw new Error('boom'); } } as never), '`timeZone` is of type object, not a time zone this runtime knows: pass an IANA name such as "Europe/Berlin".', ['timeZone']],
    ['a typo in weeklySlots options', () => weeklySlots({ ...good, timezone: 'UTC' } as never), '`timezone` is not an option of weeklySlots() (it takes timeZone, days, times, from, count, until, disambiguation). Did you mean `timeZone`?', ['timezone']],
    ['a typo in atLocalTime options', () => atLocalTime('2027-03-29T09:00', 'Europe/Berlin', { disambiguate: 'later' } as never), '`disambiguate` is not an option of atLocalTime() (it takes disambiguation). Did you mean `disambiguation`?', ['disambiguate']],
  ])('%s', (_name, run, message, path) => {
    const error = refusal(run);
    expect(error.message).toBe(message);
    expect(error.path).toEqual(path);
    expect(error.message).not.toMatch(/secret|boom/);
  });

  it('reads own options only: Object.prototype.timeZone and .disambiguation are not options', () => {
    const proto = Object.prototype as Record<string, unknown>;
    try {
      proto.timeZone = 'Asia/Tokyo';
      proto.disambiguation = 'nonsense';
      const { timeZone: _, ...noZone } = good;
      expect(() => weeklySlots(noZone as WeeklySlotsOptions)).toThrow(/^`timeZone` is undefined, not a time zone/);
      expect(atLocalTime('2027-10-31T02:30', 'Europe/Berlin').toISOString()).toBe('2027-10-31T00:30:00.000Z');
    } finally {
      delete proto.timeZone;
      delete proto.disambiguation;
    }
  });
});

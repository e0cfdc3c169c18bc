/**
 * atLocalTime against the Temporal polyfill on every zone the runtime knows and every offset change from 1970 to
 * 2037: the local times just before, inside and after each gap and overlap, under each of the four policies, give
 * the same instant (or both refuse). Plus a fast-check property over random zones, times and policies.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '@postsched/sdk';
import { atLocalTime } from '@postsched/sdk/schedule';
import { bothOutcomes, disagreements, localOf, localsAround, transitionsOf, type Transition } from './oracle.js';

const ZONES = Intl.supportedValuesOf('timeZone');
const FROM = Date.UTC(1970, 0, 1);
const TO = Date.UTC(2038, 0, 1);
const YEAR_1 = -62_135_596_800_000; // 0001-01-01T00:00Z (Date.UTC reads the year 1 as 1901)

/** Zones by their area ("Europe", "America", …): one test each, so a failure names the area and the rest still run. */
const AREAS = [...new Set(ZONES.map(areaOf))].map((area) => [area, ZONES.filter((zone) => areaOf(zone) === area)] as const);

function areaOf(zone: string): string {
  return zone.split('/')[0]!;
}

/** "02:00", or "2011-12-31 00:00" when not on `day`; with seconds when the change is not on a whole minute. */
function clock(wall: number, day: string): string {
  const iso = new Date(wall).toISOString();
  const time = iso.slice(11, wall % 60_000 ? 19 : 16);
  return iso.startsWith(day) ? time : `${iso.slice(0, 10)} ${time}`;
}

const counts = { zones: 0, transitions: 0, gaps: 0, overlaps: 0, cases: 0, refused: 0 };

describe('atLocalTime agrees with the Temporal polyfill at every offset change from 1970 to 2037', () => {
  // A time bound for a slow, loaded machine only: each area is tens of thousands of conversions by both sides.
  it.each(AREAS)('%s: every zone, every transition, five local times, four policies', { timeout: 300_000 }, (_area, zones) => {
    const problems: string[] = [];
    let cases = 0;
    for (const zone of zones) {
      counts.zones += 1;
      for (const transition of transitionsOf(zone, FROM, TO)) {
        counts.transitions += 1;
        counts[transition.after > transition.before ? 'gaps' : 'overlaps'] += 1;
        for (const local of localsAround(transition)) {
          const outcomes = bothOutcomes(local, zone);
          cases += outcomes.length;
          for (const { policy, expected, actual } of outcomes) {
            if (expected !== actual) problems.push(`${zone} ${local} ${policy}: polyfill ${expected}, ours ${actual}`);
            if (actual === 'refused') counts.refused += 1;
          }
        }
        problems.push(...refusalMessageProblems(transition));
      }
    }
    counts.cases += cases;
    expect(problems.slice(0, 20)).toEqual([]);
    expect(cases).toBeGreaterThan(0);
  });

  it('covered every zone and tens of thousands of cases, refusals included', () => {
    // Not vacuous: the sweep above really ran over the runtime's zones and found the changes.
    expect(counts.zones).toBe(ZONES.length);
    expect(counts.transitions).toBeGreaterThan(10_000);
    expect(counts.gaps).toBeGreaterThan(1_000);
    expect(counts.overlaps).toBeGreaterThan(1_000);
    expect(counts.refused).toBeGreaterThan(counts.transitions);
    console.log(`schedule oracle: ${JSON.stringify(counts)}`);
  });
});

/** The refusal of the first skipped or repeated wall time names the change: "clocks go [back] from 02:00 to 03:00". */
function refusalMessageProblems({ zone, at, before, after }: Transition): string[] {
  const wall = at + Math.min(before, after);
  const local = localOf(wall);
  let message: string;
  try {
    atLocalTime(local, zone, { disambiguation: 'reject' });
    return []; // two changes within a day: Temporal's lookup (±1 day) may see one time; the sweep compares it
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    message = error.message;
  }
  const day = local.slice(0, 10);
  const expected =
    `${clock(wall, day)} ${after > before ? 'does not exist' : 'happens twice'} in ${zone} on ${day}: ` +
    `clocks go ${after > before ? '' : 'back '}from ${clock(at + before, day)} to ${clock(at + after, day)}.`;
  return message.startsWith(expected) ? [] : [`${zone} ${local}: "${message}" does not start with "${expected}"`];
}

describe('atLocalTime agrees with the Temporal polyfill on random zones, times and policies (fast-check)', () => {
  const everyTransition = ZONES.filter((_, i) => i % 7 === 0).flatMap((zone) => transitionsOf(zone, FROM, TO));

  it('any wall time from year 1 to 9999', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: YEAR_1, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }), (zone, wall) => {
        expect(disagreements(localOf(wall), zone)).toEqual([]);
      }),
      { numRuns: 2_000 },
    );
  });

  it('wall times within a few hours of an offset change, to the minute', () => {
    expect(everyTransition.length).toBeGreaterThan(1_000);
    fc.assert(
      fc.property(fc.constantFrom(...everyTransition), fc.integer({ min: -6 * 60, max: 6 * 60 }), ({ zone, at, before }, minutes) => {
        expect(disagreements(localOf(at + before + minutes * 60_000), zone)).toEqual([]);
      }),
      { numRuns: 5_000 },
    );
  });
});

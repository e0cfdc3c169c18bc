/**
 * The oracle of the schedule tests: the Temporal polyfill (`@js-temporal/polyfill`, a dev dependency only), on
 * the same runtime time-zone data as the code under test (both read it through Intl.DateTimeFormat).
 */
import { Temporal } from '@js-temporal/polyfill';
import { ValidationError } from '@postsched/sdk';
import { atLocalTime, type Disambiguation } from '@postsched/sdk/schedule';

export const POLICIES: readonly Disambiguation[] = ['compatible', 'earlier', 'later', 'reject'];

/** One change of a zone's UTC offset: its instant and the offsets before and after it (epoch ms, ms). */
export interface Transition {
  zone: string;
  at: number;
  before: number;
  after: number;
}

/** Every offset change of `zone` in [from, to), as the polyfill's getTimeZoneTransition('next') finds them. */
export function transitionsOf(zone: string, from: number, to: number): Transition[] {
  const found: Transition[] = [];
  let current = Temporal.Instant.fromEpochMilliseconds(from).toZonedDateTimeISO(zone);
  for (;;) {
    const next = current.getTimeZoneTransition('next');
    if (next === null || next.epochMilliseconds >= to) return found;
    found.push({ zone, at: next.epochMilliseconds, before: current.offsetNanoseconds / 1e6, after: next.offsetNanoseconds / 1e6 });
    current = next;
  }
}

/** A wall time (epoch ms as if UTC) as `atLocalTime` and `PlainDateTime.from` take it: "2027-03-28T02:30:00.000". */
export const localOf = (wall: number): string => new Date(wall).toISOString().slice(0, 23);

/**
 * The local times around a transition: just before the wall times it skips or repeats, the first of them, the
 * middle, the last (1 ms before the end), and just after.
 */
export function localsAround({ at, before, after }: Transition): string[] {
  const low = at + Math.min(before, after);
  const high = at + Math.max(before, after);
  const middle = low + Math.floor((high - low) / 2 / 60_000) * 60_000;
  return [low - 1, low, middle, high - 1, high].map(localOf);
}

/** The epoch ms, or 'refused' (a RangeError from the polyfill, a ValidationError from us). */
type Outcome = number | 'refused';

function outcome(run: () => number, refusal: new (...args: never[]) => Error): Outcome {
  try {
    return run();
  } catch (error) {
    if (error instanceof refusal) return 'refused';
    throw error;
  }
}

/** For each policy: the polyfill's outcome and ours, on the same local time and zone. */
export function bothOutcomes(local: string, zone: string): Array<{ policy: Disambiguation; expected: Outcome; actual: Outcome }> {
  const plain = Temporal.PlainDateTime.from(local);
  return POLICIES.map((policy) => ({
    policy,
    expected: outcome(() => plain.toZonedDateTime(zone, { disambiguation: policy }).epochMilliseconds, RangeError),
    actual: outcome(() => atLocalTime(local, zone, { disambiguation: policy }).getTime(), ValidationError),
  }));
}

/** "zone local policy: polyfill …, ours …" for each policy where the two differ. */
export function disagreements(local: string, zone: string): string[] {
  return bothOutcomes(local, zone)
    .filter(({ expected, actual }) => expected !== actual)
    .map(({ policy, expected, actual }) => `${zone} ${local} ${policy}: polyfill ${show(expected)}, ours ${show(actual)}`);
}

const show = (outcome: Outcome) => (outcome === 'refused' ? outcome : new Date(outcome).toISOString());

/**
 * The one way a tool reads a time: ISO 8601 with an offset (`2027-03-01T09:30:00+01:00`), or a local wall time with
 * an IANA zone (`2027-03-01T09:30` + `Europe/Berlin`, resolved by `atLocalTime`). Never a bare wall time: in which
 * zone the model meant it cannot be guessed.
 */
import { PostSchedError } from '../core/base-error.js';
import { parseDateTime } from '../core/date-time.js';
import { atLocalTime } from '../schedule/local-time.js';
import { ToolRefusal } from './define.js';

/** What the fields say of the time field (`publish_at`) and its zone field (`time_zone`). */
export const TIME_HELP =
  'ISO 8601 with an offset ("2027-03-01T09:30:00+01:00" or "…Z"), or a local wall time "YYYY-MM-DDTHH:mm" together with `time_zone`.';
export const ZONE_HELP = 'IANA time zone (such as "Europe/Berlin") in which a wall-time `publish_at` is read; leave out when `publish_at` has an offset.';

/** The instant `value` names, read as the module comment says; a refusal says how to write it otherwise. */
export function resolveTime(field: string, value: string, timeZone: string | undefined): Date {
  const hasZone = /(?:[Zz]|[+-]\d\d:?\d\d)$/.test(value);
  if (timeZone !== undefined) {
    if (hasZone) throw new ToolRefusal(`${field}: give either an offset in ${JSON.stringify(value)} or time_zone, not both.`);
    try {
      return atLocalTime(value, timeZone);
    } catch (error) {
      if (error instanceof PostSchedError) throw new ToolRefusal(`${field}/time_zone: ${error.message}`);
      throw error;
    }
  }
  // Seconds may be left out ("09:30+01:00"), as people write it.
  const instant = parseDateTime(value.replace(/^(\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d)(?=[Zz+-])/, '$1:00'), true);
  if (instant === undefined || !hasZone) {
    throw new ToolRefusal(`${field} must be ${TIME_HELP} Got ${JSON.stringify(value.slice(0, 60))}.`);
  }
  return new Date(instant);
}

/** Both forms of a resolved time, echoed back so that the model (and the user) see which instant it was. */
export function echoTime(instant: Date, timeZone: string | undefined): Record<string, string> {
  const utc = instant.toISOString();
  if (timeZone === undefined) return { resolved_utc: utc };
  const local = new Intl.DateTimeFormat('sv-SE', { timeZone, dateStyle: 'short', timeStyle: 'medium', hour12: false }).format(instant);
  return { resolved_utc: utc, resolved_local: `${local.replace(' ', 'T')} ${timeZone}` };
}

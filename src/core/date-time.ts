/**
 * The one date-time reader: RFC 3339 §5.6 (a calendar date, a time with seconds, and a zone, `Z` or ±hh:mm; a time
 * without a zone would be read in the local zone of an unknown place).
 */

/** ISO 8601 with a zone: RFC 3339's form, or a lower-case `t`/`z` or a space, a comma decimal sign, an offset without colon. */
const DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(?:[Zz]|([+-])(\d\d):?(\d\d))$/;
/** Of those, what RFC 3339 does not take: `t`, a space, a comma, `z`, an offset without colon (4 digits at the end), `:60`. */
const NOT_RFC_3339 = /[t ,z]|\d{4}$|:60/;

/**
 * The instant of `text` in ms since the epoch (sub-millisecond digits as a fraction), or `undefined` when it is not an
 * RFC 3339 date-time or names no real time (31 April, 29 February of a common year, 24:00, an offset past 23:59).
 * `lenient` takes ISO 8601's variants too: a lower-case `t` or `z` or a space, a comma decimal sign, an offset
 * without a colon, a leap second (`:60`).
 */
export function parseDateTime(text: string, lenient = false): number | undefined {
  const m = DATE_TIME.exec(text);
  if (m === null || (!lenient && NOT_RFC_3339.test(text))) return undefined;
  const [year, month, day, hours, minutes, seconds, , , offsetHours, offsetMinutes] = m.slice(1).map((part) => Number(part ?? 0));
  const date = Date.UTC(year!, month! - 1, day);
  // Month 1 to 12; a day past the month's last runs over into the next month (no 31 April, 29 February in leap years only).
  if (!(month! > 0 && month! < 13) || new Date(date).getUTCDate() !== day || hours! > 23 || minutes! > 59 || seconds! > 60 || offsetHours! > 23 || offsetMinutes! > 59) {
    return undefined;
  }
  const offset = (m[8] === '-' ? -1 : 1) * (offsetHours! * 60 + offsetMinutes!);
  return date + ((hours! * 60 + minutes! - offset) * 60 + seconds!) * 1000 + Number(`0.${m[7] ?? 0}`) * 1000;
}

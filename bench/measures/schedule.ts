/**
 * `atLocalTime()`: wall times converted to instants per second, on the same inputs (local times from 2025 to 2031 in
 * twenty zones, a tenth of them on the night of a clock change), against:
 * - the Temporal polyfill, `Temporal.PlainDateTime.from(local).toZonedDateTime(zone)`: target (issue 23) ≥ 2x;
 * - the floor: one `formatToParts` of a cached `Intl.DateTimeFormat` per conversion, on the wall time already
 *   parsed. A conversion that reads the zone's offsets from Intl cannot do less than one format call.
 */
import { readFileSync } from 'node:fs';
import { Temporal } from '@js-temporal/polyfill';
import { atLocalTime } from '@postsched/sdk/schedule';
import { fmt, ratioVerdict, type Section } from '../lib/report.js';
import { interleaved } from '../lib/stats.js';

const ZONES = [
  'America/New_York', 'America/Los_Angeles', 'America/Chicago', 'America/Sao_Paulo', 'America/Santiago', 'America/Mexico_City',
  'Europe/Berlin', 'Europe/London', 'Europe/Paris', 'Europe/Madrid', 'Europe/Istanbul', 'Africa/Cairo', 'Africa/Lagos',
  'Asia/Kolkata', 'Asia/Tokyo', 'Asia/Shanghai', 'Asia/Dubai', 'Australia/Sydney', 'Australia/Lord_Howe', 'Pacific/Auckland',
];
const INPUTS = 4_096;
const BATCH = 1_000;

/** The same inputs every run: a seeded generator, and every tenth wall time on the night of a clock change. */
function inputs(): Array<{ local: string; zone: string; wall: number }> {
  let seed = 23;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const start = Date.UTC(2025, 0, 1);
  const span = Date.UTC(2031, 0, 1) - start;
  return Array.from({ length: INPUTS }, (_, i) => {
    const zone = ZONES[i % ZONES.length]!;
    let wall = start + Math.floor((random() * span) / 60_000) * 60_000;
    if (i % 10 === 0) {
      // 00:00 to 03:59 wall time on the day of the zone's next offset change, where the clocks change.
      const next = Temporal.Instant.fromEpochMilliseconds(wall).toZonedDateTimeISO(zone).getTimeZoneTransition('next');
      if (next !== null) wall = Date.parse(`${next.toPlainDate().toString()}T00:00Z`) + Math.floor(random() * 240) * 60_000;
    }
    return { local: new Date(wall).toISOString().slice(0, 16), zone, wall };
  });
}

export async function measureSchedule({ quick }: { quick: boolean }): Promise<Section> {
  const cases = inputs();
  const formats = new Map(ZONES.map((zone) => [zone, new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })]));
  const polyfill = ({ local, zone }: (typeof cases)[number]) => Temporal.PlainDateTime.from(local).toZonedDateTime(zone).epochMilliseconds;
  // Each contender must really convert, and ours must give the polyfill's instant, before anything is timed.
  const disagree = cases.filter((c) => atLocalTime(c.local, c.zone).getTime() !== polyfill(c));
  if (disagree.length > 0) throw new Error(`atLocalTime and the polyfill disagree on ${disagree.length} inputs, first ${JSON.stringify(disagree[0])}`);

  let sink = 0;
  let next = 0;
  const batch = (convert: (c: (typeof cases)[number]) => number) => () => {
    for (let i = 0; i < BATCH; i++) sink += convert(cases[next++ % INPUTS]!) % 2;
    return BATCH;
  };
  const rounds = quick ? 3 : 7;
  const roundMs = quick ? 300 : 1000;
  const result = await interleaved(
    {
      floor: batch(({ zone, wall }) => formats.get(zone)!.formatToParts(wall).length),
      ours: batch(({ local, zone }) => atLocalTime(local, zone).getTime()),
      polyfill: batch(polyfill),
    },
    { rounds, roundMs },
  );
  if (sink === -1) throw new Error('unreachable: keeps the results alive');
  const verdict = ratioVerdict('atLocalTime() ≥ 2x the Temporal polyfill (conversions per second)', result.ours / result.polyfill, 2, '≥');
  return {
    title: 'atLocalTime(): wall time to instant',
    method:
      `Conversions per second of the same ${fmt.int(INPUTS)} local times (20 zones, 2025–2031, one in ten on the night of a ` +
      `clock change), in loops of ${fmt.int(BATCH)}, median of ${rounds} interleaved rounds of ${roundMs} ms. Ratio: contender ÷ the polyfill.`,
    unit: 'conversions/s',
    rows: [
      { name: 'Temporal polyfill: PlainDateTime.from(local).toZonedDateTime(zone)', value: fmt.int(result.polyfill), note: `@js-temporal/polyfill ${polyfillVersion()}` },
      { name: 'atLocalTime(local, zone)', value: fmt.int(result.ours), ratio: fmt.x(result.ours / result.polyfill), note: `${fmt.x(result.ours / result.floor)} the floor` },
      {
        name: 'floor: one cached Intl.DateTimeFormat formatToParts per conversion',
        value: fmt.int(result.floor),
        ratio: fmt.x(result.floor / result.polyfill),
        note: 'the wall time already parsed',
      },
    ],
    target: verdict.target,
    met: verdict.met,
    verdicts: [verdict],
    notes: [
      'atLocalTime reads three offsets per conversion, as Temporal does (a day before, a day after, and the candidate ' +
        'checked), each with `format()` (about 3x cheaper than `formatToParts()`), and parses the local time itself.',
    ],
  };
}

function polyfillVersion(): string {
  const file = new URL('../../node_modules/@js-temporal/polyfill/package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

// What @postsched/sdk/schedule must give in every runtime of the matrix: it reads the runtime's own time-zone data
// through Intl.DateTimeFormat, so each runtime is checked on a skipped, a repeated and a 30-minute-shifted wall
// time, a refusal, a suggestion and a weekly series across a DST change. Shared by smoke.mjs and worker.mjs.
// Returns the problems found (none when all is well).
export function checkSchedule({ atLocalTime, weeklySlots, ValidationError }) {
  const problems = [];
  const expect = (name, got, want) => {
    if (got !== want) problems.push(`${name}: got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  };
  const refusal = (run) => {
    try {
      run();
    } catch (error) {
      return error;
    }
    return undefined;
  };
  expect('skipped 02:30, compatible', atLocalTime('2027-03-28T02:30', 'Europe/Berlin').toISOString(), '2027-03-28T01:30:00.000Z');
  expect('repeated 02:30, later', atLocalTime('2027-10-31T02:30', 'Europe/Berlin', { disambiguation: 'later' }).toISOString(), '2027-10-31T01:30:00.000Z');
  expect('Lord Howe, 30 minutes', atLocalTime('2027-10-03T02:15', 'Australia/Lord_Howe').toISOString(), '2027-10-02T15:45:00.000Z');
  const rejected = refusal(() => atLocalTime('2027-03-28T02:30', 'Europe/Berlin', { disambiguation: 'reject' }));
  expect('reject: a ValidationError of the main entry', rejected instanceof ValidationError, true);
  expect('reject: the message', String(rejected?.message).split('.')[0], '02:30 does not exist in Europe/Berlin on 2027-03-28: clocks go from 02:00 to 03:00');
  expect('unknown zone', String(refusal(() => atLocalTime('2027-03-28T09:00', 'Europe/Berlim'))?.message).split(': ')[1], 'did you mean "Europe/Berlin"?');
  const slots = [...weeklySlots({ timeZone: 'America/New_York', days: ['sun'], times: ['09:00'], from: new Date('2027-03-01T00:00:00Z'), count: 3 })];
  expect('weeklySlots across the March change', slots.map((d) => d.toISOString()).join(' '), '2027-03-07T14:00:00.000Z 2027-03-14T13:00:00.000Z 2027-03-21T13:00:00.000Z');
  return problems;
}

/**
 * Parse cost per call: what the SDK spends turning an answer's text into the returned object, before and after
 * issue 11, in the same run. "Before" is the zod/mini schemas the resources used until then (copied below from
 * src/resources at ffe53a9: every assumed field required, `z.looseObject`, a copy of each object); "after" is the
 * resources' parsers today (src/resources/validate.ts: the wire-contract schemas, assumed fields optional and kept as
 * sent, the object returned as parsed).
 * Floor: `JSON.parse` alone, which every call pays either way.
 */
import * as z from 'zod/mini';
import { pageParser } from '../../src/resources/pagination.js';
import { answerParser } from '../../src/resources/validate.js';
import { PostSchema } from '../../src/resources/wire-contract.js';
import { fmt, type Section } from '../lib/report.js';
import { interleaved } from '../lib/stats.js';

// ---- Before (ffe53a9): the zod/mini schemas and parser of src/resources.
const OldPost = z.looseObject({
  id: z.string(),
  account_ids: z.array(z.string()),
  publish_at: z.string(),
  status: z.string(),
  text: z.optional(z.string()),
  media_ids: z.optional(z.array(z.string())),
  created_at: z.string(),
  published_at: z.optional(z.string()),
});
const OldPage = z.looseObject({ data: z.array(OldPost), next_cursor: z.nullish(z.string()) });
const oldParser = (schema: z.ZodMiniType) => (body: unknown) => {
  const result = schema.safeParse(body);
  if (!result.success) throw new Error('does not match');
  return result.data;
};

// ---- After: the parsers the resources build.
const newPost = answerParser('a post', PostSchema);
const newPage = pageParser('a page of posts', PostSchema);

const post = (i: number) => ({
  id: `post_${i.toString().padStart(20, '0')}`,
  account_ids: ['acc_demo_x', 'acc_demo_linkedin'],
  publish_at: '2030-01-01T09:00:00.000Z',
  status: 'scheduled',
  text: 'Hello from the benchmark, a post of ordinary length with a link https://example.com/launch',
  media_ids: ['media_1'],
  created_at: '2029-12-31T12:00:00.000Z',
});
const ONE = JSON.stringify(post(1));
const PAGE = JSON.stringify({ data: Array.from({ length: 20 }, (_, i) => post(i)), next_cursor: 'c_next' });

const BATCH = 200;

export async function measureParseCost({ quick }: { quick: boolean }): Promise<Section> {
  const rounds = quick ? 3 : 9;
  const roundMs = quick ? 300 : 1000;
  let sink = 0;
  const loop = (text: string, parse: (body: unknown) => unknown) => () => {
    for (let i = 0; i < BATCH; i++) sink += parse(JSON.parse(text)) === undefined ? 0 : 1;
    return BATCH;
  };
  const none = (body: unknown) => body;
  const result = await interleaved(
    {
      floorOne: loop(ONE, none),
      beforeOne: loop(ONE, oldParser(OldPost)),
      afterOne: loop(ONE, newPost),
      floorPage: loop(PAGE, none),
      beforePage: loop(PAGE, oldParser(OldPage)),
      afterPage: loop(PAGE, newPage),
    },
    { rounds, roundMs },
  );
  if (sink === 0) throw new Error('nothing was parsed');
  const us = (callsPerSecond: number) => 1e6 / callsPerSecond;
  const rows: Section['rows'] = [];
  const ratios: number[] = [];
  for (const [label, floor, before, after] of [
    ['one post (posts.get)', result.floorOne, result.beforeOne, result.afterOne],
    ['a page of 20 posts (posts.list)', result.floorPage, result.beforePage, result.afterPage],
  ] as const) {
    const check = (total: number) => Math.max(us(total) - us(floor), 0);
    ratios.push(check(after) / check(before));
    rows.push(
      { name: `${label}: floor, JSON.parse only`, value: `${us(floor).toFixed(2)} µs` },
      { name: `${label}: before (zod/mini)`, value: `${us(before).toFixed(2)} µs`, ratio: fmt.x(us(before) / us(floor)), note: `check ${check(before).toFixed(2)} µs` },
      {
        name: `${label}: after`,
        value: `${us(after).toFixed(2)} µs`,
        ratio: fmt.x(us(after) / us(floor)),
        note: `check ${check(after).toFixed(2)} µs: ${fmt.x(check(after) / check(before))} before's`,
      },
    );
  }
  return {
    title: 'Parse cost per call (answer text to returned object)',
    method:
      `Time per call of JSON.parse plus the answer check, in loops of ${BATCH}, median of ${rounds} interleaved rounds of ${roundMs} ms. ` +
      'Before: the zod/mini schemas of the resources until issue 11 (copied into this measure); after: the resources\' parsers. ' +
      'Ratio: time ÷ floor (JSON.parse alone). Note: the check alone (time − floor), and after ÷ before.',
    unit: 'per call',
    rows,
    target: 'the check costs less after than before',
    met: ratios.every((r) => r < 1),
  };
}

/**
 * Events verified per second, 1 KB and 100 KB bodies, side by side in one run:
 *   npx tsx bench/webhooks.bench.ts            (about a minute)
 *   npx tsx bench/webhooks.bench.ts --quick    (a few seconds; noisier)
 *
 * Every contender gets the same body string and, where the format allows, the same header. The floor is the
 * least any correct verifier must do: one createHmac, one timingSafeEqual, one JSON.parse.
 * Targets (issue 4): node path ≥ 0.9x the floor; Web Crypto path ≥ 2x stripe's constructEventAsync as it runs
 * where there is no node:crypto (SubtleCryptoProvider, the same Web Crypto API as our web path).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { do_not_optimize, measure } from 'mitata';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import * as web from '../src/webhooks/index.js';
import * as node from '../src/webhooks/node.js';

const quick = process.argv.includes('--quick');
// Contenders are measured in interleaved rounds and each keeps its best round: on a shared, noisy machine a
// load spike then slows one round of everyone instead of skewing one contender's whole figure.
const rounds = quick ? 3 : 9;
const options = { min_cpu_time: quick ? 60e6 : 200e6 };

const secret = 'whsec_bench_4f1d9c2b7a';
const stripe = new Stripe('sk_test_x');
const subtleProvider = Stripe.createSubtleCryptoProvider();
const standard = new Webhook(Buffer.from(secret).toString('base64'));

function eventBody(size: number): string {
  const event = {
    event: 'post.published',
    created_at: '2024-05-01T12:00:00Z',
    data: { id: 'post_1', account_ids: ['acc_1', 'acc_2'], published_at: '2024-05-01T12:00:00Z', text: '' },
  };
  const bare = JSON.stringify(event).length;
  event.data.text = 'Lorem ipsum dolor sit amet, schedule all the things. '.repeat(size).slice(0, size - bare);
  return JSON.stringify(event);
}

/** The floor: what any verifier has to do, with no header parsing beyond two slices. */
function floor(body: string, header: string): unknown {
  const comma = header.indexOf(',');
  const expected = createHmac('sha256', secret).update(`${header.slice(2, comma)}.${body}`).digest();
  if (!timingSafeEqual(expected, Buffer.from(header.slice(comma + 4), 'hex'))) throw new Error('mismatch');
  return JSON.parse(body);
}

type Row = { name: string; nsPerEvent: number };

async function contenders(body: string) {
  const t = Math.floor(Date.now() / 1000);
  const header = `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
  const id = 'msg_bench';
  const standardHeaders = {
    'webhook-id': id,
    'webhook-timestamp': String(t),
    'webhook-signature': standard.sign(id, new Date(t * 1000), body),
  };
  return {
    floor: () => floor(body, header),
    'ours, node path (node:crypto)': () => node.verifyWebhook({ body, signature: header, secret }),
    'ours, web path (Web Crypto)': () => web.verifyWebhook({ body, signature: header, secret }),
    'stripe constructEvent': () => stripe.webhooks.constructEvent(body, header, secret),
    'stripe constructEventAsync (node provider)': () => stripe.webhooks.constructEventAsync(body, header, secret),
    'stripe constructEventAsync (SubtleCrypto)': () =>
      stripe.webhooks.constructEventAsync(body, header, secret, undefined, subtleProvider),
    'standardwebhooks verify': () => standard.verify(body, standardHeaders),
  } satisfies Record<string, () => unknown>;
}

async function runSize(label: string, size: number): Promise<Row[]> {
  const body = eventBody(size);
  const entries = Object.entries(await contenders(body));
  for (const [name, fn] of entries) {
    const event = (await fn()) as { data?: { id?: string } }; // each one must really verify before it is timed
    if (event?.data?.id !== 'post_1') throw new Error(`${name} did not return the event`);
  }
  const rows: Row[] = entries.map(([name]) => ({ name, nsPerEvent: Infinity }));
  for (let round = 0; round < rounds; round++) {
    for (const [i, [, fn]] of entries.entries()) {
      const stats = await measure(async () => do_not_optimize(await fn()), options);
      rows[i]!.nsPerEvent = Math.min(rows[i]!.nsPerEvent, stats.avg);
    }
  }
  print(`${label} body (${body.length} bytes)`, rows);
  return rows;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function print(title: string, rows: Row[]) {
  const floorNs = rows[0]!.nsPerEvent;
  console.log(`\n${title}`);
  console.log(`| ${'verifier'.padEnd(44)} | ${'events/s'.padStart(10)} | ${'µs/event'.padStart(8)} | vs floor |`);
  console.log(`|${'-'.repeat(46)}|${'-'.repeat(12)}|${'-'.repeat(10)}|----------|`);
  for (const { name, nsPerEvent } of rows) {
    console.log(
      `| ${name.padEnd(44)} | ${fmt(1e9 / nsPerEvent).padStart(10)} | ${(nsPerEvent / 1000).toFixed(2).padStart(8)} | ` +
        `${(floorNs / nsPerEvent).toFixed(2).padStart(7)}x |`,
    );
  }
}

function targets(label: string, rows: Row[]) {
  const ns = (name: string) => rows.find((row) => row.name.startsWith(name))!.nsPerEvent;
  const nodeVsFloor = ns('floor') / ns('ours, node');
  const webVsStripeSubtle = ns('stripe constructEventAsync (SubtleCrypto)') / ns('ours, web');
  const webVsStripeNode = ns('stripe constructEventAsync (node provider)') / ns('ours, web');
  const mark = (ok: boolean) => (ok ? 'met' : 'MISSED');
  console.log(
    `${label}: node path ${nodeVsFloor.toFixed(2)}x floor (target ≥ 0.9: ${mark(nodeVsFloor >= 0.9)}); ` +
      `web path ${webVsStripeSubtle.toFixed(2)}x stripe async on SubtleCrypto (target ≥ 2: ${mark(webVsStripeSubtle >= 2)}); ` +
      `web path ${webVsStripeNode.toFixed(2)}x stripe async on node:crypto`,
  );
}

console.log(`Node ${process.version}, ${quick ? 'quick' : 'full'} run: best of ${rounds} interleaved rounds of mitata's average`);
const small = await runSize('1 KB', 1024);
const large = await runSize('100 KB', 100 * 1024);
console.log('\nTargets');
targets('1 KB', small);
targets('100 KB', large);

/**
 * Webhook events verified per second, 1 KB and 100 KB bodies, side by side in one run.
 *
 * Every contender gets the same body string and, where the format allows, the same header. The floor is the
 * least any correct verifier must do: one createHmac, one timingSafeEqual, one JSON.parse.
 * Targets (issue 6): node path ≥ 0.9x the floor; Web Crypto path ≥ 2x stripe's constructEventAsync as it runs
 * where there is no node:crypto (SubtleCryptoProvider, the same Web Crypto API as our web path).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { do_not_optimize, measure } from 'mitata';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import * as web from '../../src/webhooks/index.js';
import * as node from '../../src/webhooks/node.js';
import { fmt, type Row, type Section } from '../lib/report.js';

const secret = 'whsec_bench_4f1d9c2b7a';

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

const NAMES = {
  floor: 'floor: createHmac + timingSafeEqual + JSON.parse',
  node: 'ours, node path (node:crypto)',
  web: 'ours, web path (Web Crypto)',
  stripe: 'stripe constructEvent',
  stripeAsync: 'stripe constructEventAsync (node provider)',
  stripeSubtle: 'stripe constructEventAsync (SubtleCrypto)',
  standard: 'standardwebhooks verify',
} as const;
type Key = keyof typeof NAMES;

function contenders(body: string): Record<Key, () => unknown> {
  const stripe = new Stripe('sk_test_x');
  const subtleProvider = Stripe.createSubtleCryptoProvider();
  const standard = new Webhook(Buffer.from(secret).toString('base64'));
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
    node: () => node.verifyWebhook({ body, signature: header, secret }),
    web: () => web.verifyWebhook({ body, signature: header, secret }),
    stripe: () => stripe.webhooks.constructEvent(body, header, secret),
    stripeAsync: () => stripe.webhooks.constructEventAsync(body, header, secret),
    stripeSubtle: () => stripe.webhooks.constructEventAsync(body, header, secret, undefined, subtleProvider),
    standard: () => standard.verify(body, standardHeaders),
  };
}

/**
 * Contenders are measured in interleaved rounds and each keeps its best round: on a shared, noisy machine a
 * load spike then slows one round of everyone instead of skewing one contender's whole figure.
 */
async function nsPerEvent(body: string, rounds: number, minCpuNs: number): Promise<Record<Key, number>> {
  const fns = contenders(body);
  const keys = Object.keys(fns) as Key[];
  for (const key of keys) {
    const event = (await fns[key]()) as { data?: { id?: string } }; // each one must really verify before it is timed
    if (event?.data?.id !== 'post_1') throw new Error(`${NAMES[key]} did not return the event`);
  }
  const best = Object.fromEntries(keys.map((k) => [k, Infinity])) as Record<Key, number>;
  for (let round = 0; round < rounds; round++) {
    for (const key of keys) {
      const fn = fns[key];
      const stats = await measure(async () => do_not_optimize(await fn()), { min_cpu_time: minCpuNs });
      best[key] = Math.min(best[key], stats.avg);
    }
  }
  return best;
}

function section(label: string, size: number, ns: Record<Key, number>, rounds: number): Section {
  const perSecond = (key: Key) => 1e9 / ns[key];
  const rows: Row[] = (Object.keys(NAMES) as Key[]).map((key) => ({
    name: NAMES[key],
    value: fmt.int(perSecond(key)),
    ...(key === 'floor' ? {} : { ratio: fmt.x(perSecond(key) / perSecond('floor')) }),
    note: `${(ns[key] / 1000).toFixed(2)} µs/event`,
  }));
  const nodeVsFloor = perSecond('node') / perSecond('floor');
  const webVsStripeSubtle = perSecond('web') / perSecond('stripeSubtle');
  return {
    title: `Webhook verification, ${label} body`,
    method:
      `Events verified per second on a ${size}-byte body: best of ${rounds} interleaved rounds of mitata's average. ` +
      'Ratio: contender ÷ floor (higher is faster).',
    unit: 'events/s',
    rows,
    target: 'node path ≥ 0.9x the floor; web path ≥ 2x stripe constructEventAsync on SubtleCrypto',
    met: nodeVsFloor >= 0.9 && webVsStripeSubtle >= 2,
    notes: [
      `node path: ${fmt.x(nodeVsFloor)} the floor; web path: ${fmt.x(webVsStripeSubtle)} stripe async on SubtleCrypto, ` +
        `${fmt.x(perSecond('web') / perSecond('stripeAsync'))} stripe async on node:crypto.`,
    ],
  };
}

export async function measureWebhooks({ quick }: { quick: boolean }): Promise<Section[]> {
  const rounds = quick ? 3 : 9;
  const minCpuNs = quick ? 30e6 : 200e6;
  const sections: Section[] = [];
  for (const [label, size] of [['1 KB', 1024], ['100 KB', 100 * 1024]] as const) {
    const body = eventBody(size);
    sections.push(section(label, body.length, await nsPerEvent(body, rounds, minCpuNs), rounds));
  }
  return sections;
}

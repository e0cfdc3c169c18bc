/**
 * The service as the fleet tests need it: the same signed events, each delivered `copies` times in shuffled order
 * (seeded; the copies of one event land near each other, as a retry after a sender's time-out does, so copies
 * meet runs in flight), `concurrency` deliveries at a time. A delivery answered anything but 2xx is re-delivered
 * (signed anew) until the event has a 2xx: once any copy got one, the service considers the event delivered and
 * retries none of its copies. So a 2xx given to a copy while another copy's run then fails loses the event,
 * which only the handlers' success counts show. Counted here: answers by status, deliveries that got no answer,
 * and deliveries given up after `maxAttempts`.
 */
import { signWebhook } from '@postsched/sdk/webhooks';

export interface SenderStats {
  /** Answers received, by status. */
  statuses: Record<number, number>;
  /** Attempts that got no HTTP answer (connection reset, closed). */
  unanswered: number;
  /** Deliveries still without a 2xx after `maxAttempts`. */
  lost: number;
}

export interface SenderOptions {
  secret: string;
  copies: number;
  concurrency: number;
  seed: number;
  /** Sends one attempt and resolves with the status; rejects when no answer came. */
  post(body: string, signature: string): Promise<number>;
  maxAttempts?: number;
  /** Called when an attempt is sent and when it is answered (or not): what is in flight at any moment. */
  onAttempt?(body: string, phase: 'sent' | 'settled'): void;
}

/** A seeded generator of numbers in [0, 1) (a linear congruential one: enough to shuffle). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (state * 1_664_525 + 1_013_904_223) >>> 0) / 2 ** 32;
}

/**
 * The order of the deliveries: the events shuffled, then each event's `copies` placed at random within `window`
 * positions of where the event fell.
 */
export function deliveryOrder(bodies: readonly string[], copies: number, seed: number, window: number): string[] {
  const random = seeded(seed);
  const events = [...bodies];
  for (let i = events.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [events[i], events[j]] = [events[j]!, events[i]!];
  }
  const placed = events.flatMap((body, i) => Array.from({ length: copies }, () => ({ body, at: i * copies + random() * window })));
  return placed.sort((a, b) => a.at - b.at).map(({ body }) => body);
}

export async function deliverAll(bodies: readonly string[], options: SenderOptions): Promise<SenderStats> {
  const stats: SenderStats = { statuses: {}, unanswered: 0, lost: 0 };
  const queue = deliveryOrder(bodies, options.copies, options.seed, 2 * options.concurrency);
  const maxAttempts = options.maxAttempts ?? 500;
  const acknowledged = new Set<string>();
  async function deliver(body: string): Promise<void> {
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
      if (attempt > 0 && acknowledged.has(body)) return; // delivered: the service retries no copy of it
      options.onAttempt?.(body, 'sent');
      let status: number;
      try {
        status = await options.post(body, await signWebhook({ body, secret: options.secret }));
      } catch {
        stats.unanswered += 1;
        continue;
      } finally {
        options.onAttempt?.(body, 'settled');
      }
      stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
      if (status >= 200 && status < 300) return void acknowledged.add(body);
    }
    stats.lost += 1;
  }
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      for (let body = queue.shift(); body !== undefined; body = queue.shift()) await deliver(body);
    }),
  );
  return stats;
}

/** `count` post.published events of distinct posts, `post_0` … `post_<count-1>`. */
export function publishedEvents(count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const at = new Date(Date.UTC(2024, 4, 1, 12) + i * 1000).toISOString();
    return JSON.stringify({ event: 'post.published', created_at: at, data: { id: `post_${i}`, account_ids: ['acc_1'], published_at: at } });
  });
}

/** The post id of a body made by `publishedEvents`. */
export const postIdOf = (body: string): string => (JSON.parse(body) as { data: { id: string } }).data.id;

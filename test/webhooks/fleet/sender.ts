/**
 * The service as the fleet tests need it: the same signed events, each delivered `copies` times in shuffled order
 * (seeded), `concurrency` deliveries at a time, each re-delivered (signed anew) after any answer but 2xx until it
 * gets a 2xx. It counts what a user relies on: answers by status, deliveries that got no answer, and deliveries
 * that never got a 2xx (lost).
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

export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0;
  const random = () => ((state = (state * 1_664_525 + 1_013_904_223) >>> 0) / 2 ** 32);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export async function deliverAll(bodies: readonly string[], options: SenderOptions): Promise<SenderStats> {
  const stats: SenderStats = { statuses: {}, unanswered: 0, lost: 0 };
  const queue = shuffled(bodies.flatMap((body) => Array<string>(options.copies).fill(body)), options.seed);
  const maxAttempts = options.maxAttempts ?? 500;
  async function deliver(body: string): Promise<void> {
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
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
      if (status >= 200 && status < 300) return;
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

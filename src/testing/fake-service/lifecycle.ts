/**
 * The post lifecycle on the fake clock (spec section 3 and 6; statuses from assumptions.md):
 * created `scheduled` → at `publish_at`, `published` (or `failed` when a target account is configured to
 * fail) → each change fires its webhook event. Deleting a scheduled post makes it `deleted`.
 */
import type { Context } from './context.js';
import type { FakePost } from './state.js';

/** Queues the publication of `post` at its `publish_at` on the fake clock. */
export function schedulePublication(ctx: Context, post: FakePost): void {
  const due = post.publish_at;
  ctx.clock.schedule(Date.parse(due), () => {
    // A post deleted or moved to another time since then is left alone (the newer schedule handles it).
    if (post.status !== 'scheduled' || post.publish_at !== due) return;
    if (post.account_ids.some((id) => ctx.state.failingAccounts.has(id))) {
      post.status = 'failed';
      ctx.emit('post.failed', post);
    } else {
      post.status = 'published';
      post.published_at = new Date(ctx.clock.now()).toISOString();
      ctx.emit('post.published', post);
    }
  });
}

/** FNV-1a: a stable hash, so a post's analytics are the same on every run. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/** Deterministic analytics for a published post (derived from its id); zeros before publication. */
export function analyticsFor(post: FakePost) {
  if (post.status !== 'published') {
    return { post_id: post.id, impressions: 0, likes: 0, shares: 0, comments: 0, clicks: 0 };
  }
  const h = fnv1a(post.id);
  const impressions = 100 + (h % 9_900);
  const likes = Math.floor((impressions * (1 + ((h >>> 8) % 20))) / 100);
  return {
    post_id: post.id,
    impressions,
    likes,
    shares: Math.floor((likes * (1 + ((h >>> 16) % 10))) / 20),
    comments: Math.floor((likes * (1 + ((h >>> 20) % 10))) / 25),
    clicks: Math.floor((impressions * (1 + ((h >>> 24) % 8))) / 100),
  };
}

// Type-checks the installed tarball's declarations the way a user's ESM TypeScript code uses them.
// Compiled by tsc with `moduleResolution` node16 (tsconfig.node16.json) and bundler (tsconfig.bundler.json).
import {
  NotFoundError, OAuthClient, PostSched, PostSchedError, TokenManager, MemoryTokenStore,
  type Post, type Scope, type TokenSet,
} from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from '@postsched/sdk/webhooks';
import { RedisTokenStore, type IORedisClientLike } from '@postsched/sdk/redis';
import { atLocalTime, weeklySlots, type Disambiguation, type Weekday } from '@postsched/sdk/schedule';

export async function flow(fake: FakeService = createFakeService()): Promise<Post> {
  const { url: baseUrl } = await fake.listen();
  const oauth = new OAuthClient({ baseUrl, clientId: 'app', clientSecret: 'secret', redirectUri: 'http://127.0.0.1/cb' });
  const scopes: Scope[] = ['posts:write'];
  const pending = await oauth.createAuthorizationUrl({ scopes });
  const tokens: TokenSet = await oauth.exchangeCode('http://127.0.0.1/cb?code=c&state=s', pending);
  const manager = new TokenManager({ oauth, store: new MemoryTokenStore(tokens) });
  const redis: IORedisClientLike = { call: async () => null };
  const shared = new TokenManager({ oauth, store: new RedisTokenStore({ redis, key: 'postsched:tokens:user_1', encryptionKey: new Uint8Array(32).fill(7) }) });
  void shared;
  const client = new PostSched({ baseUrl, auth: manager });
  const post = await client.posts.create({ account_ids: ['acc_1'], publish_at: new Date() });
  const disambiguation: Disambiguation = 'reject';
  const days: Weekday[] = ['mon', 'fri'];
  await client.posts.create({ account_ids: ['acc_1'], publish_at: atLocalTime('2030-01-07T09:00', 'Europe/Berlin', { disambiguation }) });
  for (const at of weeklySlots({ timeZone: 'America/New_York', days, times: ['09:00'], count: 2 })) {
    const instant: Date = at;
    void instant;
  }
  // @ts-expect-error a day is 'mon' to 'sun', not a full name.
  weeklySlots({ timeZone: 'UTC', days: ['monday'], times: ['09:00'], count: 1 });
  const id: string = post.id;
  // @ts-expect-error account_ids is an array of ids: the declarations are real types, not `any`.
  await client.posts.create({ account_ids: 'acc_1', publish_at: new Date() });
  try {
    await client.posts.get(id);
  } catch (error) {
    if (error instanceof NotFoundError) {
      const status: number = error.status;
      void status;
    }
    if (error instanceof PostSchedError) console.error(error.message);
  }
  return post;
}

export async function onWebhook(body: string, signature: string): Promise<string> {
  try {
    const event: WebhookEvent = await verifyWebhook({ body, signature, secret: 'whsec_1' });
    switch (event.event) {
      case 'post.published':
        return event.data.published_at;
      default:
        return event.event;
    }
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
}

// The same declarations seen from a CommonJS TypeScript file (`require`, node16: resolves the .d.cts types).
import sdk = require('@postsched/sdk');
import webhooks = require('@postsched/sdk/webhooks');
import testing = require('@postsched/sdk/testing');
import schedule = require('@postsched/sdk/schedule');

async function flowCjs(): Promise<sdk.Post> {
  const fake = testing.createFakeService();
  const { url: baseUrl } = await fake.listen();
  const client = new sdk.PostSched({ baseUrl, auth: 'token' });
  const event = await webhooks.verifyWebhook({ body: '{}', signature: 't=1,v1=00', secret: 'whsec_1' });
  void event.created_at;
  // @ts-expect-error publish_at is required.
  await client.posts.create({ account_ids: ['acc_1'] });
  return client.posts.create({ account_ids: ['acc_1'], publish_at: schedule.atLocalTime('2030-01-07T09:00', 'Europe/Berlin') });
}

export = flowCjs;

// The CommonJS side of the smoke test: `require()` of every entry, then real work with the CJS build
// (ky and oauth4webapi are bundled into it): an authorization URL, a listed page of accounts, a webhook round trip.
'use strict';

const sdk = require('@postsched/sdk');
const webhooks = require('@postsched/sdk/webhooks');
const testing = require('@postsched/sdk/testing');
require('@postsched/sdk/redis');
const schedule = require('@postsched/sdk/schedule');

const POST = { id: 'post_cjs', account_ids: ['acc_demo_x'], publish_at: '2030-01-01T00:00:00.000Z', status: 'deleted', created_at: '2029-12-31T00:00:00.000Z' };

/** Runs against the fake at `baseUrl` with a valid `accessToken`; returns the modules for the instanceof checks (and the schedule entry's). */
async function runCjs({ baseUrl, accessToken, clientId, clientSecret, redirectUri }) {
  const oauth = new sdk.OAuthClient({ baseUrl, clientId, clientSecret, redirectUri });
  const pending = await oauth.createAuthorizationUrl({ scopes: ['accounts:read'] });
  const url = new URL(pending.url);
  if (url.searchParams.get('code_challenge_method') !== 'S256') throw new Error('cjs: authorize URL without S256');

  const client = new sdk.PostSched({ baseUrl, auth: accessToken });
  const accounts = await client.accounts.list().toArray();
  if (accounts.length === 0) throw new Error('cjs: accounts.list returned no accounts');

  const body = JSON.stringify({ event: 'post.deleted', created_at: new Date().toISOString(), data: POST });
  const signature = await webhooks.signWebhook({ body, secret: 'whsec_cjs' });
  const event = await webhooks.verifyWebhook({ body, signature, secret: 'whsec_cjs' });
  if (event.event !== 'post.deleted') throw new Error('cjs: verifyWebhook returned the wrong event');

  if (typeof testing.createFakeService !== 'function') throw new Error('cjs: testing entry has no createFakeService');
  if (schedule.atLocalTime('2027-03-28T02:30', 'Europe/Berlin').toISOString() !== '2027-03-28T01:30:00.000Z') throw new Error('cjs: atLocalTime');
  return { sdk, webhooks, schedule };
}

module.exports = { runCjs, resolved: require.resolve('@postsched/sdk') };

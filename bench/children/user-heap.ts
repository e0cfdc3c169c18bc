/**
 * Child process of the fleet measure (run with --expose-gc): what a cached user costs with `UserClients`' default
 * store, one process, no Redis. `users` users are connected and make one call each against the fake service in
 * this process (its handler as `fetch`); heap after a settled GC, less the heap before the `UserClients` was made,
 * per cached user, tokens included. Prints JSON `{ heapPerUser, cachedUsers }`.
 * `node --expose-gc --import tsx user-heap.ts <users>`
 */
import type * as Sdk from '@postsched/sdk';
import type * as SdkTesting from '@postsched/sdk/testing';
import { settledHeap } from '../lib/heap.js';

const users = Number(process.argv[2] ?? 10_000);
const dist = (path: string) => new URL(`../../dist/${path}`, import.meta.url).href;
const { OAuthClient, UserClients } = (await import(dist('index.node.js'))) as typeof Sdk;
const { createFakeService } = (await import(dist('testing/index.js'))) as typeof SdkTesting;

const fake = createFakeService();
const app = fake.registerApp({ redirectUris: ['https://app.example/callback'] });
const fetch = (input: Request | string | URL, init?: RequestInit) => fake.handler(new Request(input, init));
const oauth = new OAuthClient({ baseUrl: fake.baseUrl, clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: 'https://app.example/callback', fetch });
const options = { oauth, baseUrl: fake.baseUrl, clientOptions: { fetch }, maxUsers: users };
const ids = Array.from({ length: users }, (_, i) => `user_${i}`);
const tokens = ids.map(() => fake.issueTokenSet({ clientId: app.clientId }));

// Warm-up: the call path compiled, lazy caches made.
const warm = new UserClients(options);
for (let i = 0; i < 20; i++) {
  await warm.connect(`warm_${i}`, fake.issueTokenSet({ clientId: app.clientId }));
  await warm.client(`warm_${i}`).accounts.list().toArray();
}
await warm[Symbol.asyncDispose]();

const before = await settledHeap();
const cache = new UserClients(options);
for (let i = 0; i < users; i++) await cache.connect(ids[i] as string, tokens[i] as Sdk.TokenSet);
for (const userId of ids) await cache.client(userId).accounts.list().toArray();
const after = await settledHeap();
console.log(JSON.stringify({ heapPerUser: (after - before) / cache.size, cachedUsers: cache.size }));

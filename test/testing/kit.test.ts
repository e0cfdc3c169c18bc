import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import {
  createFakeService,
  signedWebhookDelivery,
  signWebhook,
  webhookFixture,
  webhookFixtures,
} from '@postsched/sdk/testing';
import { MemoryTokenStore, OAuthClient, PostSched, TokenManager } from '@postsched/sdk';
import { verifyWebhook, WEBHOOK_EVENT_TYPES, WebhookVerificationError, type WebhookEventType } from '@postsched/sdk/webhooks';

const SECRET = 'whsec_kit_test';

describe('webhook fixtures', () => {
  it.each(WEBHOOK_EVENT_TYPES)('the %s fixture verifies and comes back from verifyWebhook unchanged', async (type) => {
    const body = JSON.stringify(webhookFixtures[type]);
    const signature = await signWebhook({ body, secret: SECRET });
    const event = await verifyWebhook({ body, signature, secret: SECRET });
    expect(event.event).toBe(type);
    expect(event).toEqual(webhookFixtures[type]);
  });

  it('has exactly one fixture per event type the SDK knows', () => {
    expect(Object.keys(webhookFixtures).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });

  it('gives post.published a published_at, as the spec requires', () => {
    expect(webhookFixtures['post.published'].data.published_at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
  });

  it('keeps the shared fixtures frozen, and webhookFixture() returns a copy with overrides', () => {
    expect(Object.isFrozen(webhookFixtures['post.failed'].data.account_ids)).toBe(true);
    expect(() => {
      (webhookFixtures['post.failed'].data as { id: string }).id = 'changed';
    }).toThrow(TypeError);
    const copy = webhookFixture('post.failed', { data: { id: 'post_42', account_ids: ['acc_1'] }, created_at: '2031-01-01T00:00:00.000Z' });
    expect(copy).toMatchObject({ event: 'post.failed', created_at: '2031-01-01T00:00:00.000Z', data: { id: 'post_42', account_ids: ['acc_1'], status: 'failed' } });
    copy.data.account_ids!.push('acc_2'); // defined: toMatchObject above checked it
    expect(webhookFixtures['post.failed'].data.account_ids).not.toContain('acc_2');
    expect(webhookFixture('post.failed').data.account_ids).toEqual(webhookFixtures['post.failed'].data.account_ids);
  });

  it('refuses an unknown event type with a message naming the known ones', () => {
    expect(() => webhookFixture('post.archived' as WebhookEventType)).toThrow(/post\.scheduled, post\.published/);
  });

  it('signedWebhookDelivery gives a body and headers that verifyWebhook accepts, and its timestamp counts', async () => {
    const { body, headers } = await signedWebhookDelivery('post.deleted', { secret: SECRET, timestamp: 1_900_000_000 });
    expect(headers['content-type']).toBe('application/json');
    const event = await verifyWebhook({ body, signature: headers, secret: SECRET, now: 1_900_000_000_000 });
    expect(event).toEqual(webhookFixtures['post.deleted']);
    const stale = verifyWebhook({ body, signature: headers, secret: SECRET, now: 1_900_000_000_000 + 301_000 });
    await expect(stale).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(stale).rejects.toMatchObject({ reason: 'timestamp_too_old' });
  });

  it('signedWebhookDelivery signs a custom event object as given', async () => {
    const custom = webhookFixture('post.published', { data: { id: 'post_custom' } });
    const { body, headers } = await signedWebhookDelivery(custom, { secret: SECRET });
    expect(await verifyWebhook({ body, signature: headers, secret: SECRET })).toMatchObject({ data: { id: 'post_custom' } });
    await expect(verifyWebhook({ body, signature: headers, secret: 'whsec_other' })).rejects.toMatchObject({ reason: 'no_matching_signature' });
  });

  it('has the same fields as the bodies the fake service delivers', async () => {
    const bodies: string[] = [];
    const fake = createFakeService({
      accounts: [{ id: 'acc_ok' }, { id: 'acc_bad', failPublication: true }],
      webhookEndpoints: [{ url: 'http://receiver.test/hooks', secret: SECRET }],
      webhooks: {
        fetch: async (_url, init) => {
          bodies.push(String(init.body));
          return new Response(null, { status: 204 });
        },
      },
    });
    try {
      const { access_token } = fake.issueTokens();
      const create = async (account: string, text: string) => {
        const res = await fake.handler(
          new Request(`${fake.baseUrl}/posts`, {
            method: 'POST',
            headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ account_ids: [account], publish_at: new Date(fake.clock.now() + 60_000).toISOString(), text }),
          }),
        );
        return ((await res.json()) as { id: string }).id;
      };
      await create('acc_ok', 'published');
      await create('acc_bad', 'failed');
      const toDelete = await create('acc_ok', 'deleted');
      await fake.handler(new Request(`${fake.baseUrl}/posts/${toDelete}`, { method: 'DELETE', headers: { authorization: `Bearer ${access_token}` } }));
      await fake.clock.advance(120_000);
      await fake.flushWebhooks();
      const seen = new Map<string, { keys: string[]; dataKeys: string[] }>();
      for (const text of bodies) {
        const body = JSON.parse(text) as { event: string; data: Record<string, unknown> };
        seen.set(body.event, { keys: Object.keys(body).sort(), dataKeys: Object.keys(body.data).sort() });
      }
      for (const type of WEBHOOK_EVENT_TYPES) {
        const fixture = webhookFixtures[type];
        expect(seen.get(type), type).toEqual({ keys: Object.keys(fixture).sort(), dataKeys: Object.keys(fixture.data).sort() });
      }
    } finally {
      await fake.close();
    }
  });
});

describe('the @postsched/sdk/testing entry', () => {
  it('imports neither msw nor any node: module at load time (listen() loads node:http lazily)', async () => {
    const entry = fileURLToPath(new URL('../../src/testing/index.ts', import.meta.url));
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      metafile: true,
      format: 'esm',
      platform: 'neutral',
      packages: 'external',
      logLevel: 'silent',
    });
    const imports = Object.entries(result.metafile.inputs).flatMap(([file, input]) =>
      input.imports.map((i) => ({ file, path: i.path, kind: i.kind })),
    );
    expect(imports.filter((i) => /^msw(\/|$)/.test(i.path))).toEqual([]);
    const node = imports.filter((i) => i.path.startsWith('node:'));
    expect(node.length).toBeGreaterThan(0); // the lazy listen path is seen, so the check itself works
    for (const i of node) {
      expect(i).toMatchObject({ kind: 'dynamic-import', path: 'node:http' });
      expect(i.file).toMatch(/fake-service\/listen\.ts$/);
    }
    // The Web Crypto signer, not the node:crypto one.
    expect(Object.keys(result.metafile.inputs).some((f) => f.endsWith('webhooks/crypto-node.ts'))).toBe(false);
  });
});

describe('fake.issueTokenSet()', () => {
  it('gives a TokenSet that a TokenManager uses as is, for API calls and for a refresh', async () => {
    const fake = createFakeService({ apps: [{ clientId: 'app_kit', clientSecret: 'secret_kit', redirectUris: ['http://127.0.0.1/cb'] }] });
    const { url } = await fake.listen();
    try {
      const before = Date.now();
      const tokens = fake.issueTokenSet({ clientId: 'app_kit', scopes: ['accounts:read'] });
      expect(Object.keys(tokens).sort()).toEqual(['accessToken', 'expiresAt', 'refreshToken', 'scopes', 'tokenType']);
      expect(tokens).toMatchObject({ scopes: ['accounts:read'], tokenType: 'bearer' });
      expect(tokens.expiresAt).toBeGreaterThanOrEqual(before + 3_600_000);
      expect(tokens.expiresAt).toBeLessThanOrEqual(Date.now() + 3_600_000);

      const oauth = new OAuthClient({ baseUrl: url, clientId: 'app_kit', clientSecret: 'secret_kit', redirectUri: 'http://127.0.0.1/cb' });
      const manager = new TokenManager({ oauth, store: new MemoryTokenStore({ ...tokens, expiresAt: Date.now() - 1 }) });
      const client = new PostSched({ baseUrl: url, auth: manager });
      expect((await client.accounts.list().toArray()).map((a) => a.id)).toEqual(['acc_demo_x', 'acc_demo_linkedin']);
      expect(fake.stats.tokenRequests.refresh_token).toBe(1); // the refresh token it gave is a real one
    } finally {
      await fake.close();
    }
  });
});

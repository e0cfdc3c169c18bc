/**
 * The SDK against the fake service over real HTTP on 127.0.0.1: the fake listening on a port, a webhook
 * receiver on another, and the browser step of OAuth done with fetch (`redirect: 'manual'`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuthClient, type Scope, SCOPES, type TokenSet } from '@postsched/sdk';
import { createFakeService, type FakeService, type FakeServiceOptions } from '@postsched/sdk/testing';
import { verifyWebhook, type WebhookEvent } from '@postsched/sdk/webhooks';
import { FAKE_PROFILE_OPTIONS } from '../support/fake-profile.js';

export const APP = {
  clientId: 'client_integration',
  clientSecret: 'secret_integration_4f1c',
  redirectUris: ['http://localhost:3000/callback'],
};

export interface Started {
  fake: FakeService;
  baseUrl: string;
  oauth: OAuthClient;
}

/** The fake on 127.0.0.1, answering in the wire profile of this vitest project (test/support/fake-profile.ts). */
export async function startFake(options: FakeServiceOptions = {}): Promise<Started> {
  const fake = createFakeService({ apps: [APP], ...FAKE_PROFILE_OPTIONS, ...options });
  const { url } = await fake.listen();
  const oauth = new OAuthClient({ baseUrl: url, clientId: APP.clientId, clientSecret: APP.clientSecret, redirectUri: APP.redirectUris[0] as string });
  return { fake, baseUrl: url, oauth };
}

/** What the browser brings back to the app: the callback URL, and what the app kept in its session. */
export async function authorize(oauth: OAuthClient, scopes: readonly Scope[] = SCOPES) {
  const { url, ...pending } = await oauth.createAuthorizationUrl({ scopes });
  const response = await fetch(url, { redirect: 'manual' });
  const callback = response.headers.get('location');
  if (response.status !== 302 || callback === null) throw new Error(`authorize answered ${response.status}`);
  return { callback, pending };
}

/** The whole login: authorize, then exchange the code. */
export async function login(oauth: OAuthClient, scopes: readonly Scope[] = SCOPES): Promise<TokenSet> {
  const { callback, pending } = await authorize(oauth, scopes);
  return oauth.exchangeCode(callback, pending);
}

export interface Receiver {
  url: string;
  /** Events that verified, in arrival order. */
  events: WebhookEvent[];
  /** Deliveries refused (400), with the reason. */
  refused: string[];
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1 that verifies each delivery with `verifyWebhook`. `now` gives the
 * receiver's idea of the time: the fake signs with its own clock, which a test may have moved.
 */
export async function startReceiver(secret: string, now: () => number): Promise<Receiver> {
  const events: WebhookEvent[] = [];
  const refused: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      verifyWebhook({ body: Buffer.concat(chunks), signature: req.headers, secret, now: now() }).then(
        (event) => {
          events.push(event);
          res.writeHead(204).end();
        },
        (error: { reason?: string }) => {
          refused.push(error.reason ?? String(error));
          res.writeHead(400).end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    events,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

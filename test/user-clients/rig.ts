/**
 * The fake service in-process (its handler as the `fetch` of both the OAuthClient and the clients), with refresh
 * tokens that rotate and revoke the grant when a rotated-out one comes back, and a refresher that counts refreshes
 * per user. A `gate` holds refreshes until the test opens it, to catch a user while their refresh is in flight.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { OAuthClient, type TokenRefresher, type TokenSet } from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { flushIO } from '../helpers.js';

export interface Rig {
  fake: FakeService;
  oauth: OAuthClient;
  /** Counts refreshes per user and can hold them (`gate`); pass it as `UserClients`' `oauth`. */
  refresher: TokenRefresher;
  fetch: (input: Request | string | URL, init?: RequestInit) => Promise<Response>;
  /** Refreshes that reached the service, per user. */
  refreshes: Map<string, number>;
  /** Refreshes sent with a refresh token already sent once (rotated out): each one revokes that user's grant. */
  reused: number;
  /** Fresh tokens for `userId` (a new grant), already expired for the SDK unless `expired` is false. */
  tokensFor(userId: string, expired?: boolean): TokenSet;
  /** While set, every refresh waits for it before going to the service. */
  gate: Promise<void> | undefined;
  /** Each refresh first waits a random time up to this, in ms, as a token endpoint over a network takes. */
  refreshLatencyMs: number;
  /** When set (to `[]`), every request the fake receives is added, rendered: method, URL, headers and body. */
  sent: string[] | undefined;
}

export function createRig(): Rig {
  const fake = createFakeService({ refreshTokenReuse: 'revoke-grant' });
  const app = fake.registerApp({ redirectUris: ['https://app.example/callback'] });
  const fetch = async (input: Request | string | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    rig.sent?.push(`${request.method} ${request.url} ${JSON.stringify([...request.headers])} ${await request.clone().text()}`);
    return fake.handler(request);
  };
  const oauth = new OAuthClient({ baseUrl: fake.baseUrl, clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: 'https://app.example/callback', fetch });
  const ownerOf = new Map<string, string>(); // refresh token → user
  const refreshes = new Map<string, number>();
  const sent = new Set<string | undefined>();
  const rig: Rig = {
    fake,
    oauth,
    fetch,
    refreshes,
    reused: 0,
    gate: undefined,
    refreshLatencyMs: 0,
    sent: undefined,
    refresher: {
      async refresh(previous) {
        const userId = ownerOf.get(previous.refreshToken ?? '') ?? 'unknown';
        refreshes.set(userId, (refreshes.get(userId) ?? 0) + 1);
        if (sent.has(previous.refreshToken)) rig.reused++;
        sent.add(previous.refreshToken);
        await rig.gate;
        if (rig.refreshLatencyMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * rig.refreshLatencyMs));
        const next = await oauth.refresh(previous);
        if (next.refreshToken !== undefined) ownerOf.set(next.refreshToken, userId);
        return next;
      },
    },
    tokensFor(userId, expired = true) {
      const tokens = fake.issueTokenSet({ clientId: app.clientId });
      ownerOf.set(tokens.refreshToken ?? '', userId);
      return expired ? { ...tokens, expiresAt: Date.now() - 1_000 } : tokens;
    },
  };
  return rig;
}

/** A promise and the function that settles it. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * A full garbage collection, with a turn of the event loop around it: a manager the cache dropped is handed out
 * again while anything still holds it, so a test that needs it gone lets go of it and collects.
 */
export async function collectGarbage(): Promise<void> {
  await flushIO();
  gc();
  await new Promise((resolve) => setTimeout(resolve, 0));
  gc();
  await flushIO();
}

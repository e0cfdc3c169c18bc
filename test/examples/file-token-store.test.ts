import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OAuthClient, OAuthError, TokenStoreError, type TokenSet } from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { FAKE_PROFILE, FAKE_PROFILE_OPTIONS } from '../support/fake-profile.js';
import { configFromEnv, createTokenManager, FileTokenStore, main, type Config } from '../../examples/file-token-store.js';

const tokens = (n: number): TokenSet => ({
  accessToken: `at_${n}`,
  refreshToken: `rt_${n}`,
  expiresAt: 1_900_000_000_000 + n,
  scopes: ['accounts:read'],
  tokenType: 'bearer',
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'postsched-file-store-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

describe('examples/file-token-store.ts: FileTokenStore', () => {
  it('returns undefined before anything was saved, then what was saved', async () => {
    const store = new FileTokenStore(join(dir, 'nested', 'tokens.json'));
    expect(await store.get()).toBeUndefined();
    await store.set(tokens(1));
    expect(await store.get()).toEqual(tokens(1));
    expect(await new FileTokenStore(join(dir, 'nested', 'tokens.json')).get()).toEqual(tokens(1)); // survives a restart
  });

  it('writes a file only its owner can read, and leaves no temp file behind', async () => {
    const path = join(dir, 'tokens.json');
    const store = new FileTokenStore(path);
    await store.set(tokens(1));
    await store.set(tokens(2));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['tokens.json']);
  });

  it('keeps the last of 50 concurrent writes, and the file is whole JSON', async () => {
    const path = join(dir, 'tokens.json');
    const store = new FileTokenStore(path);
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.set(tokens(i))));
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(tokens(49));
    expect(await readdir(dir)).toEqual(['tokens.json']);
  });

  it('honours expectedRefreshToken: a write over tokens it does not expect is refused and the file kept', async () => {
    const store = new FileTokenStore(join(dir, 'tokens.json'));
    await store.set(tokens(3));
    expect(await store.set(tokens(2), { expectedRefreshToken: 'rt_1' })).toBe(false);
    expect(await store.get()).toEqual(tokens(3));
    expect(await store.set(tokens(4), { expectedRefreshToken: 'rt_3' })).toBe(true);
    expect(await store.get()).toEqual(tokens(4));
  });

  it('runs lock holders one at a time, in order, even when one fails', async () => {
    const store = new FileTokenStore(join(dir, 'tokens.json'));
    let inside = 0;
    let maxInside = 0;
    const order: number[] = [];
    const hold = (n: number, fail = false) =>
      store.lock(async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        await new Promise((resolve) => setImmediate(resolve));
        order.push(n);
        inside--;
        if (fail) throw new Error(`holder ${n} failed`);
        return n;
      });
    const results = await Promise.allSettled([hold(1), hold(2, true), hold(3)]);
    expect(maxInside).toBe(1);
    expect(order).toEqual([1, 2, 3]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('reports a corrupt file without quoting it (it holds tokens)', async () => {
    const path = join(dir, 'tokens.json');
    await writeFile(path, '{"accessToken":"at_secret_value", truncated');
    const error = await new FileTokenStore(path).get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/not valid JSON; delete it and log in again/);
    expect((error as Error).message).not.toContain('at_secret_value');
  });

  it('through TokenManager, a corrupt file becomes a TokenStoreError naming get()', async () => {
    const path = join(dir, 'tokens.json');
    await writeFile(path, 'nope');
    const manager = createTokenManager({ baseUrl: 'http://127.0.0.1:1', clientId: 'c', clientSecret: 's', redirectUri: 'http://localhost/cb', tokenFile: path });
    await expect(manager.getAccessToken()).rejects.toMatchObject({ name: 'TokenStoreError', operation: 'get' });
    await expect(manager.getAccessToken()).rejects.toBeInstanceOf(TokenStoreError);
  });
});

describe('examples/file-token-store.ts against the fake service on 127.0.0.1', () => {
  let fake: FakeService;
  let config: Config;
  const app = { clientId: 'client_file_store', clientSecret: 'secret_file_store', redirectUris: ['http://localhost:3000/callback'] };

  beforeEach(async () => {
    fake = createFakeService({ apps: [app], ...FAKE_PROFILE_OPTIONS });
    const { url } = await fake.listen();
    config = configFromEnv({
      POSTSCHED_BASE_URL: url,
      POSTSCHED_CLIENT_ID: app.clientId,
      POSTSCHED_CLIENT_SECRET: app.clientSecret,
      POSTSCHED_REDIRECT_URI: app.redirectUris[0],
      POSTSCHED_TOKEN_FILE: join(dir, 'tokens.json'),
    });
    vi.spyOn(console, 'log').mockImplementation(() => {});
    vi.spyOn(console, 'error').mockImplementation(() => {});
  });
  afterEach(async () => {
    await fake.close();
    process.exitCode = undefined;
  });

  it('refreshes expired tokens from the file, saves the rotated refresh token there, and lists the accounts', async () => {
    const issued = fake.issueTokenSet({ clientId: app.clientId });
    // Expired by the local clock: the manager refreshes before the first call.
    await new FileTokenStore(config.tokenFile).set({ ...issued, expiresAt: Date.now() - 1_000 });

    // An account the service sends without a name (not in its spec) is listed by id.
    const names = await main(config);
    if (FAKE_PROFILE === 'full') expect(names).toEqual(['Demo on X', 'Demo on LinkedIn']);
    if (FAKE_PROFILE === 'minimal') expect(names).toEqual(['acc_demo_x', 'acc_demo_linkedin']);
    expect(names).toHaveLength(2);
    expect(['Demo on X', 'acc_demo_x']).toContain(names[0]);
    expect(['Demo on LinkedIn', 'acc_demo_linkedin']).toContain(names[1]);
    expect(fake.stats.tokenRequests.refresh_token).toBe(1);

    const saved = JSON.parse(await readFile(config.tokenFile, 'utf8')) as TokenSet;
    expect(saved.refreshToken).not.toBe(issued.refreshToken);
    expect(saved.expiresAt).toBeGreaterThan(Date.now());
    // The old refresh token is spent (rotation): only the file's copy works now.
    const { tokenFile: _, ...oauthOptions } = config;
    const oauth = new OAuthClient(oauthOptions);
    await expect(oauth.refresh(issued.refreshToken as string)).rejects.toBeInstanceOf(OAuthError);
    await expect(oauth.refresh(saved)).resolves.toMatchObject({ tokenType: 'bearer' });
  });

  it('asks to log in again, with exit code 1, when the file is empty', async () => {
    expect(await main(config)).toEqual([]);
    expect(process.exitCode).toBe(1);
    expect(console.error).toHaveBeenCalledWith(expect.stringMatching(/^Log in again: No tokens are stored yet/));
  });

  it('names the missing environment variable', () => {
    expect(() => configFromEnv({ POSTSCHED_BASE_URL: 'http://127.0.0.1:1' })).toThrow(/Set POSTSCHED_CLIENT_ID/);
  });
});

/**
 * The mistakes of a newcomer's first hour, each answered by a message that names the cause and the call that fixes
 * it: a `baseUrl` read from an unset variable, a wall time without a zone, a user with no tokens yet (the call to
 * make differs for `UserClients` and a `TokenManager` of one's own), and the CLI in a clone of the repository.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MemoryTokenStore, OAuthClient, PostSched, ReauthorizationRequiredError, TokenManager, UserClients, ValidationError } from '@postsched/sdk';

const BASE = 'https://api.postsched.test';
const oauth = new OAuthClient({ baseUrl: BASE, clientId: 'app', clientSecret: 'secret_first_hour', redirectUri: 'https://app.example/callback' });

describe('first-hour messages', () => {
  it('a baseUrl left undefined says it was undefined and what it must be', () => {
    for (const make of [
      () => new PostSched({ baseUrl: process.env['POSTSCHED_UNSET_VARIABLE_FOR_TEST'] as string, auth: 'tok' }),
      () => new OAuthClient({ baseUrl: undefined as unknown as string, clientId: 'app', clientSecret: 'secret_first_hour', redirectUri: 'https://app.example/callback' }),
    ]) {
      expect(make).toThrow(ValidationError);
      expect(make).toThrow(/^`baseUrl` is undefined \(an unset environment variable\?\): it must be the service's base URL, such as "https:\/\/api\.postsched\.example"\.$/);
    }
    expect(() => new PostSched({ baseUrl: 42 as unknown as string, auth: 'tok' })).toThrow(/^`baseUrl` is 42: it must be the service's base URL/);
  });

  it('a publish_at without a zone points at atLocalTime', async () => {
    const client = new PostSched({ baseUrl: BASE, auth: 'tok', fetch: () => Promise.reject(new Error('nothing is sent')) });
    const error = await client.posts.create({ account_ids: ['acc_1'], publish_at: '2031-06-02T09:30' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/with a time zone, .* For a wall time, use atLocalTime\("2031-06-02T09:30", "Europe\/Berlin"\) from @postsched\/sdk\/schedule\.$/);
    // Not a wall time: no such pointer.
    const other = await client.posts.create({ account_ids: ['acc_1'], publish_at: 'tomorrow' }).catch((e: unknown) => e);
    expect((other as Error).message).not.toContain('atLocalTime');
  });

  it('a user with no tokens is told users.connect() under UserClients, manager.setTokens() with a TokenManager', async () => {
    const users = new UserClients({ oauth, baseUrl: BASE });
    const forUser = await users.manager('user_1').getAccessToken().catch((e: unknown) => e);
    expect(forUser).toBeInstanceOf(ReauthorizationRequiredError);
    expect((forUser as ReauthorizationRequiredError).reason).toBe('no_tokens');
    expect((forUser as Error).message).toContain('`oauth.exchangeCode()` to `users.connect(userId, tokens)`.');
    expect((forUser as Error).message).not.toContain('setTokens');

    const manager = new TokenManager({ oauth, store: new MemoryTokenStore() });
    const own = await manager.getAccessToken().catch((e: unknown) => e);
    expect((own as ReauthorizationRequiredError).reason).toBe('no_tokens');
    expect((own as Error).message).toContain('`oauth.exchangeCode()` to `manager.setTokens(tokens)`.');
    expect((own as Error).message).not.toContain('users.connect');
  });

  it('in a clone, `npm run postsched -- …` is the CLI from source (npx postsched does not find the package\'s own bin)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['postsched']).toBe('tsx src/cli/index.ts');
    expect(pkg.scripts['mock']).toBe(`${pkg.scripts['postsched']} mock`);
  });
});

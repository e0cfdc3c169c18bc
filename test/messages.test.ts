/**
 * What a user reads: each message says its advice once, ends in one full stop, says where a missing value
 * comes from, and no example a user may copy carries a date that will be in the past.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OAuthError, PostSched, ReauthorizationRequiredError, ValidationError } from '@postsched/sdk';
import { makeAPIError } from '../src/core/status-error.js';
import { verifyWebhook, WebhookVerificationError } from '@postsched/sdk/webhooks';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('error messages', () => {
  it('a 403 insufficient_scope says its advice once, even when the service gave the same advice', () => {
    const error = makeAPIError(
      403,
      { error: { code: 'insufficient_scope', message: 'This call needs the posts:write scope; authorize again asking for it.' } },
      new Headers({ 'www-authenticate': 'Bearer error="insufficient_scope", scope="posts:write"', 'x-request-id': 'req_1' }),
    );
    expect(error.message).toBe(
      '403 Forbidden: the access token lacks the "posts:write" scope; authorize the user again, asking for it (request req_1)',
    );
    expect(error.message.match(/authoriz/g)).toHaveLength(1);
    // The service's own words are not lost: they stay on the error's body.
    expect(error.body).toMatchObject({ error: { message: expect.stringContaining('needs the posts:write scope') } });
  });

  it.each([
    ['a description with a full stop', 'Client authentication failed.'],
    ['a description without one', 'Client authentication failed'],
  ])('an OAuth error with %s ends in exactly one full stop', (_, description) => {
    const error = new OAuthError({ error: 'invalid_client', error_description: description, status: 401 });
    expect(error.message).toBe('The token endpoint (HTTP 401) answered with the OAuth error "invalid_client": Client authentication failed.');
    expect(new OAuthError({ error: 'access_denied' }).message).toBe('The authorization server answered with the OAuth error "access_denied".');
  });

  it('a refused refresh states the description as a sentence, then the advice', () => {
    const error = new ReauthorizationRequiredError('invalid_grant', { error_description: 'The refresh token was revoked.' });
    expect(error.message).toBe(
      'The token endpoint refused the refresh token (invalid_grant): The refresh token was revoked. The user must authorize the app again.',
    );
    expect(new ReauthorizationRequiredError('invalid_grant').message).not.toMatch(/\.\./);
  });

  it.each([
    ['an empty secret', ''],
    ['an empty list of secrets', [] as string[]],
  ])('a webhook check with %s says where the secret comes from', async (_, secret) => {
    const error = await verifyWebhook({ body: '{}', signature: 't=1,v1=00', secret }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error as WebhookVerificationError).reason).toBe('invalid_secret');
    expect((error as Error).message).toMatch(/is empty: pass the endpoint's signing secret from the dashboard/);
    expect((error as Error).message).toContain('POSTSCHED_WEBHOOK_SECRET');
  });

  it('a publish_at in a wrong format suggests a time that is still ahead', async () => {
    const client = new PostSched({ baseUrl: 'http://127.0.0.1:1', auth: 'token' });
    const error = await client.posts.create({ account_ids: ['acc_1'], publish_at: '2031-01-01 10:00' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const suggested = /such as "([^"]+)"/.exec((error as Error).message)?.[1];
    expect(Date.parse(suggested ?? '')).toBeGreaterThan(Date.now());
  });
});

/** Date literals (2025-06-01…) in code a user copies: README code blocks, examples/, and JSDoc `@example`s. */
const DATE = /\b(?:19|20)\d\d-[01]\d-[0-3]\d/;

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

/** The lines of each `@example` block of the JSDoc comments in `text`. */
function exampleLines(text: string): string[] {
  const lines: string[] = [];
  for (const comment of text.match(/\/\*\*[\s\S]*?\*\//g) ?? []) {
    let inExample = false;
    for (const line of comment.split('\n')) {
      if (/^\s*\*\s*@/.test(line)) inExample = /^\s*\*\s*@example\b/.test(line);
      else if (inExample) lines.push(line);
    }
  }
  return lines;
}

describe('examples a user copies', () => {
  it('carry no fixed date, which would one day be in the past and get a 422 (they use Date.now() + …)', async () => {
    const found: string[] = [];
    const pages = ['README.md', 'CONTRIBUTING.md', ...(await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
    for (const page of pages) {
      for (const block of (await readFile(join(ROOT, page), 'utf8')).match(/```(?:ts|js|sh)\n[\s\S]*?```/g) ?? []) {
        for (const line of block.split('\n')) if (DATE.test(line)) found.push(`${page}: ${line.trim()}`);
      }
    }
    for (const file of await sourceFiles(join(ROOT, 'examples'))) {
      for (const line of (await readFile(file, 'utf8')).split('\n')) if (DATE.test(line)) found.push(`${file}: ${line.trim()}`);
    }
    for (const file of await sourceFiles(join(ROOT, 'src'))) {
      for (const line of exampleLines(await readFile(file, 'utf8'))) if (DATE.test(line)) found.push(`${file}: ${line.trim()}`);
    }
    expect(found).toEqual([]);
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { FAKE_PROFILE, FAKE_PROFILE_OPTIONS, FULL } from '../support/fake-profile.js';
import {
  configFromEnv,
  createClient,
  explain,
  listScheduled,
  main,
  publishTime,
  schedulePost,
  uploadMedia,
  type Config,
} from '../../examples/schedule-post.js';

/** Collects what the example prints. */
function output() {
  const chunks: string[] = [];
  return { write: (text: string) => chunks.push(text), text: () => chunks.join('') };
}

let fake: FakeService;
let url: string;
let config: Config;

beforeEach(async () => {
  fake = createFakeService(FAKE_PROFILE_OPTIONS);
  ({ url } = await fake.listen());
  config = configFromEnv({
    POSTSCHED_BASE_URL: url,
    POSTSCHED_ACCESS_TOKEN: fake.issueTokens().access_token,
    POSTSCHED_ACCOUNT_ID: 'acc_demo_x',
    POSTSCHED_POST_TEXT: 'Launch day',
  });
  vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(async () => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
  await fake.close();
});

describe('examples/schedule-post.ts against the fake service on 127.0.0.1', () => {
  it('uploads the image, schedules a post with it, lists it among the scheduled posts and cancels it', async () => {
    const out = output();
    const result = await main(config, out);
    expect(result).toBeDefined();
    const { media, post, scheduled, cancelled } = result!;
    // The media id is assumed: `full` and `minimal` send it; `noisy` may not, and the post then goes without media.
    const mediaId = typeof media.id === 'string' ? media.id : undefined;
    if (FAKE_PROFILE !== 'noisy') expect(mediaId).toBeDefined();
    if (mediaId !== undefined) {
      expect(fake.getMedia(mediaId)?.item).toMatchObject({ filename: 'pixel.png', content_type: 'image/png' });
      expect([...(fake.getMedia(mediaId)?.prefix.subarray(0, 4) ?? [])]).toEqual([0x89, 0x50, 0x4e, 0x47]); // PNG signature
    }
    expect(post.account_ids).toEqual(['acc_demo_x']);
    expect(fake.getPost(post.id)).toMatchObject({ text: 'Launch day', ...(mediaId === undefined ? {} : { media_ids: [mediaId] }) });
    if (FULL) expect(post).toMatchObject({ media_ids: [mediaId], text: 'Launch day', status: 'scheduled' });
    expect(scheduled.map((p) => p.id)).toContain(post.id);
    expect(fake.getPost(post.id)?.status).toBe('deleted');
    expect(fake.stats.postsCreated).toBe(1);
    expect(out.text()).toContain('Uploading pixel.png: 100%');
    expect(out.text()).toContain(`Cancelled ${post.id} (status ${FAKE_PROFILE === 'minimal' ? 'not given' : FULL ? 'deleted' : ''}`);
    if (FULL) expect(cancelled?.status).toBe('deleted');
    expect(out.text()).not.toMatch(/undefined/);
    expect(process.exitCode).toBeUndefined();
  });

  it('streams a file from disk with a progress line that climbs to 100 %, and keeps the post when asked', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'postsched-media-'));
    try {
      const path = join(dir, 'photo.JPG');
      await writeFile(path, new Uint8Array(300_000).fill(7));
      const out = output();
      const result = await main({ ...config, mediaFile: path, keepPost: true }, out);
      const mediaId = result!.media.id;
      if (typeof mediaId === 'string') {
        expect(fake.getMedia(mediaId)?.item).toMatchObject({ filename: 'photo.JPG', content_type: 'image/jpeg', size: 300_000 });
      }
      const percents = [...out.text().matchAll(/Uploading photo\.JPG: (\d+)%/g)].map((m) => Number(m[1]));
      expect(percents.length).toBeGreaterThan(1);
      expect(percents).toEqual([...percents].sort((a, b) => a - b));
      expect(percents.at(-1)).toBe(100);
      expect(result!.cancelled).toBeUndefined();
      expect(fake.getPost(result!.post.id)?.status).toBe('scheduled');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('creates exactly one post when the first POST /posts answers 503 (the idempotency key makes the retry safe)', async () => {
    fake.faults.error({ method: 'POST', path: '/posts', status: 503 });
    const result = await main({ ...config, keepPost: true }, output());
    expect(fake.getPost(result!.post.id)?.status).toBe('scheduled');
    expect(fake.stats.requests['POST /posts']).toBe(2);
    expect(fake.stats.postsCreated).toBe(1);
  });

  it('prints a user-facing line and exits 1 when the account is not connected', async () => {
    const result = await main({ ...config, accountId: 'acc_not_connected' }, output());
    expect(result).toBeUndefined();
    expect(process.exitCode).toBe(1);
    expect(console.error).toHaveBeenCalledWith(expect.stringMatching(/^The service refused "account_ids\.0": 422/));
  });
});

describe('examples/schedule-post.ts: the publish time is a wall time in the user\'s zone', () => {
  const berlin = (publishAt?: string) => ({ ...config, timeZone: 'Europe/Berlin', publishAt });

  it('sends the instant of the wall time asked for, and prints it back in the zone', async () => {
    const out = output();
    const result = await main(berlin('2099-03-30T09:00'), out); // a Monday in summer time (CEST, UTC+02:00)
    expect(Date.parse(fake.getPost(result!.post.id)!.publish_at as string)).toBe(Date.parse('2099-03-30T07:00:00Z'));
    expect(out.text()).toContain('(2099-03-30 09:00:00 in Europe/Berlin)');
  });

  it('without a wall time: the next weekday at 09:00 in the zone, across the change to summer time', () => {
    // Friday 2027-03-26 10:00 CET: Monday 29 March 09:00 is in CEST, one hour less from UTC.
    expect(publishTime({ timeZone: 'Europe/Berlin' }, new Date('2027-03-26T09:00:00Z')).toISOString()).toBe('2027-03-29T07:00:00.000Z');
    expect(publishTime({ timeZone: 'America/New_York' }, new Date('2027-03-12T15:00:00Z')).toISOString()).toBe('2027-03-15T13:00:00.000Z');
  });

  it('refuses a wall time the clocks skip, before anything is sent, and says why', async () => {
    const result = await main(berlin('2099-03-29T02:30'), output());
    expect(result).toBeUndefined();
    expect(process.exitCode).toBe(1);
    expect(console.error).toHaveBeenCalledWith(
      expect.stringMatching(/^Invalid input: 02:30 does not exist in Europe\/Berlin on 2099-03-29: clocks go from 02:00 to 03:00\./),
    );
    expect(fake.stats.requests).toEqual({});
  });

  it('refuses a misspelt zone with the closest name', async () => {
    await main({ ...config, timeZone: 'Europe/Berlim' }, output());
    expect(console.error).toHaveBeenCalledWith('Invalid input: `timeZone` is "Europe/Berlim", not a time zone this runtime knows: did you mean "Europe/Berlin"?');
    expect(process.exitCode).toBe(1);
  });
});

describe('examples/schedule-post.ts: explain() for each error a user must handle', () => {
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail('expected the call to fail'),
      (error: unknown) => error,
    );
  const inAnHour = () => new Date(fake.clock.now() + 3_600_000);

  it('ValidationError: bad input, caught before sending', async () => {
    const client = createClient(config);
    const error = await failure(schedulePost(client, { accountId: '', text: 'x', publishAt: inAnHour() }));
    expect(explain(error)).toMatch(/^Invalid input: `account_ids\.0`/);
    expect(fake.stats.requests['POST /posts']).toBeUndefined();
  });

  it('UnprocessableEntityError: the service names the refused field', async () => {
    const client = createClient(config);
    const error = await failure(schedulePost(client, { accountId: 'acc_demo_x', text: 'x', publishAt: new Date(fake.clock.now() - 60_000) }));
    expect(explain(error)).toMatch(/^The service refused "publish_at": .*must be in the future/);
  });

  it('PermissionDeniedError: names the missing scope', async () => {
    const client = createClient({ ...config, accessToken: fake.issueTokens({ scopes: ['posts:read'] }).access_token });
    const error = await failure(schedulePost(client, { accountId: 'acc_demo_x', text: 'x', publishAt: inAnHour() }));
    expect(explain(error)).toBe('The access token lacks the "posts:write" scope: authorize the app again, asking for it.');
  });

  it('AuthenticationError: a refused token means logging in again', async () => {
    const client = createClient({ ...config, accessToken: 'at_revoked_or_unknown' });
    expect(explain(await failure(listScheduled(client, output())))).toMatch(/log in again/);
  });

  it('ConflictError: a published post cannot be cancelled', async () => {
    const client = createClient(config);
    const post = await schedulePost(client, { accountId: 'acc_demo_x', text: 'x', publishAt: new Date(fake.clock.now() + 60_000) });
    await fake.clock.advance(120_000);
    expect(explain(await failure(client.posts.delete(post.id)))).toMatch(/no longer scheduled/);
  });

  it('RateLimitError: a wait longer than the SDK sits out is passed on to the user', async () => {
    fake.faults.rateLimit({ method: 'GET', path: '/posts', retryAfter: 120 });
    const error = await failure(listScheduled(createClient(config), output()));
    expect(explain(error)).toBe('Too many requests: try again in 120 s.');
  });

  it('APIError: a persistent 5xx carries the request id for support', async () => {
    fake.faults.error({ method: 'GET', path: '/posts', status: 500, times: Infinity });
    const error = await failure(listScheduled(createClient({ ...config, maxRetries: 0 }), output()));
    expect(explain(error)).toMatch(/^The service failed \(HTTP 500\)\. If it persists, contact support quoting request req_[A-Za-z0-9_-]+\.$/);
  });

  it('TimeoutError: says the post may exist', async () => {
    fake.faults.hang({ method: 'GET', path: '/posts' });
    const error = await failure(listScheduled(createClient({ ...config, timeoutMs: 200, maxRetries: 0 }), output()));
    expect(explain(error)).toMatch(/did not answer within 200 ms\. A post may or may not have been created/);
  });

  it('ConnectionError: nobody listening at the base URL', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    const client = createClient({ ...config, baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 });
    expect(explain(await failure(listScheduled(client, output())))).toMatch(/^Could not reach the service .* Check POSTSCHED_BASE_URL/);
  });

  it('returns undefined for an error that is a bug, so main() lets it crash', () => {
    expect(explain(new TypeError('undefined is not a function'))).toBeUndefined();
  });

  it('names the missing environment variable', () => {
    expect(() => configFromEnv({ POSTSCHED_BASE_URL: url })).toThrow(/Set POSTSCHED_ACCESS_TOKEN/);
  });
});

it('uploadMedia alone prints the final line with the media id', async () => {
  const out = output();
  const item = await uploadMedia(createClient(config), undefined, out);
  expect(out.text()).toContain(
    `Uploaded pixel.png as ${typeof item.id === 'string' ? item.id : 'a media item without an id (the post goes without it)'}`,
  );
});

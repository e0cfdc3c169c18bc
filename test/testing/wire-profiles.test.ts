import { describe, expect, it } from 'vitest';
import { createFakeService, type FakeService, type FakeServiceOptions } from '@postsched/sdk/testing';

/** A fake and a way to call it in-process with a token holding every scope. */
function started(options: FakeServiceOptions) {
  const fake = createFakeService({ clock: { mode: 'manual', start: Date.UTC(2030, 0, 1) }, ...options });
  const token = fake.issueTokens().access_token;
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string; json: any }> => {
    const response = await fake.handler(
      new Request(`${fake.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    const text = await response.text();
    return { status: response.status, text, json: JSON.parse(text) };
  };
  return { fake, call };
}

const at = (fake: FakeService, ms: number) => new Date(fake.clock.now() + ms).toISOString();

async function upload(fake: FakeService, token: string): Promise<unknown> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array([1, 2, 3])], { type: 'image/png' }), 'a.png');
  const response = await fake.handler(new Request(`${fake.baseUrl}/media`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form }));
  return response.json();
}

/** Every answer of one fake, after the same calls: posts, a page, accounts, analytics, media. */
async function tour(options: FakeServiceOptions): Promise<unknown[]> {
  const { fake, call } = started(options);
  const answers: unknown[] = [];
  for (let i = 0; i < 6; i++) {
    const created = await call('POST', '/posts', { account_ids: ['acc_demo_x'], publish_at: at(fake, 60_000 * (i + 1)), text: `post ${i}`, media_ids: [] });
    answers.push(created.json);
  }
  const ids = [...((await call('GET', '/posts?limit=100')).json.data as Array<{ id: string }>)].map((p) => p.id);
  for (const id of ids) answers.push((await call('GET', `/posts/${id}`)).json, (await call('GET', `/posts/${id}/analytics`)).json);
  answers.push((await call('GET', '/posts?limit=2')).json, (await call('GET', '/accounts')).json, (await call('GET', '/accounts/acc_demo_x')).json);
  answers.push(await upload(fake, fake.issueTokens().access_token));
  await fake.close();
  return answers;
}

describe('wire profile "minimal": only the fields the spec gives, and what a flow needs', () => {
  it('answers posts, accounts, analytics and media with the spec fields only', async () => {
    const { fake, call } = started({ profile: 'minimal' });
    const created = await call('POST', '/posts', { account_ids: ['acc_demo_x'], publish_at: at(fake, 60_000), text: 'Hi', campaign: 'spring' });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ id: expect.stringMatching(/^post_/), account_ids: ['acc_demo_x'] });
    const id = created.json.id as string;
    // The fake keeps everything; only its answers are cut.
    expect(fake.getPost(id)).toMatchObject({ status: 'scheduled', text: 'Hi', campaign: 'spring' });
    expect((await call('GET', `/posts/${id}`)).json).toEqual({ id, account_ids: ['acc_demo_x'] });
    expect((await call('PATCH', `/posts/${id}`, { text: 'Hello' })).json).toEqual({ id, account_ids: ['acc_demo_x'] });
    expect((await call('GET', `/posts/${id}/analytics`)).json).toEqual({});
    expect((await call('GET', '/accounts/acc_demo_x')).json).toEqual({ id: 'acc_demo_x' });
    expect((await call('GET', '/accounts')).json).toEqual({ data: [{ id: 'acc_demo_x' }, { id: 'acc_demo_linkedin' }] });
    expect(await upload(fake, fake.issueTokens().access_token)).toEqual({ id: expect.stringMatching(/^media_/) });
    expect((await call('DELETE', `/posts/${id}`)).json).toEqual({ id, account_ids: ['acc_demo_x'] });
    await fake.close();
  });

  it('keeps next_cursor while there are more pages, and leaves it out on the last one', async () => {
    const { fake, call } = started({ profile: 'minimal' });
    for (let i = 0; i < 3; i++) await call('POST', '/posts', { account_ids: ['acc_demo_x'], publish_at: at(fake, 60_000) });
    const first = await call('GET', '/posts?limit=2');
    expect(Object.keys(first.json)).toEqual(['data', 'next_cursor']);
    const last = await call('GET', `/posts?limit=2&cursor=${encodeURIComponent(first.json.next_cursor)}`);
    expect(Object.keys(last.json)).toEqual(['data']);
    expect(last.json.data).toHaveLength(1);
    await fake.close();
  });

  it('leaves errors and the OAuth answers as they are', async () => {
    const { fake, call } = started({ profile: 'minimal' });
    expect((await call('GET', '/posts/post_nope')).json).toMatchObject({ error: { code: 'not_found' } });
    expect(fake.issueTokens()).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    await fake.close();
  });
});

describe('wire profile "noisy": seeded garbling of every assumed field', () => {
  it('gives the same answers for the same seed, and other answers for another seed', async () => {
    const ids = (answers: unknown[]) => JSON.stringify(answers).replace(/"(post|media|acc)_[\w-]+"/g, '"ID"').replace(/"[A-Za-z0-9_-]{20,}"/g, '"CURSOR"');
    const first = ids(await tour({ profile: 'noisy', seed: 7 }));
    expect(ids(await tour({ profile: 'noisy', seed: 7 }))).toBe(first);
    expect(ids(await tour({ profile: 'noisy', seed: 8 }))).not.toBe(first);
  });

  it('keeps the given fields and the page envelope, and leaves out, nulls, retypes, renames the status, adds and shuffles the rest', async () => {
    const answers = (await tour({ profile: 'noisy', seed: 1 })) as Array<Record<string, unknown>>;
    const posts = answers.filter((a) => typeof a['id'] === 'string' && String(a['id']).startsWith('post_'));
    expect(posts.length).toBeGreaterThan(10);
    for (const post of posts) expect(post['account_ids']).toEqual(['acc_demo_x']);
    const pages = answers.filter((a) => Array.isArray(a['data']));
    for (const page of pages) expect(page['next_cursor'] === undefined || page['next_cursor'] === null || typeof page['next_cursor'] === 'string').toBe(true);
    expect(pages.find((p) => (p['data'] as unknown[]).length === 2)?.['next_cursor']).toEqual(expect.any(String));

    const values = posts.flatMap((post) => ['publish_at', 'status', 'text', 'created_at'].map((key) => [key, key in post, post[key]] as const));
    expect(values.some(([, present]) => !present)).toBe(true); // left out
    expect(values.some(([, , value]) => value === null)).toBe(true);
    expect(values.some(([, present, value]) => present && value !== null && typeof value !== 'string')).toBe(true); // another type
    expect(posts.some((post) => typeof post['status'] === 'string' && !['scheduled', 'published', 'failed', 'deleted'].includes(post['status'] as string))).toBe(true);
    const known = new Set(['id', 'account_ids', 'publish_at', 'status', 'text', 'media_ids', 'created_at', 'published_at']);
    const extra = posts.flatMap((post) => Object.entries(post).filter(([key]) => !known.has(key)));
    expect(extra.length).toBeGreaterThan(0);
    expect(extra.some(([, value]) => typeof value === 'object' && value !== null && !Array.isArray(value))).toBe(true); // nested objects
    expect(posts.some((post) => Object.keys(post)[0] !== 'id' && Object.keys(post)[0] !== 'account_ids')).toBe(true); // shuffled
  });
});

describe('createFakeService({ profile })', () => {
  it('refuses an unknown profile and a seed that is not an integer', () => {
    expect(() => createFakeService({ profile: 'sparse' as never })).toThrow(/profile must be one of full, minimal, noisy/);
    expect(() => createFakeService({ profile: 'noisy', seed: 1.5 })).toThrow(/seed must be an integer/);
  });

  it('answers every field it keeps under "full", the default', async () => {
    const { fake, call } = started({});
    const created = await call('POST', '/posts', { account_ids: ['acc_demo_x'], publish_at: at(fake, 60_000), text: 'Hi' });
    expect(Object.keys(created.json).sort()).toEqual(['account_ids', 'created_at', 'id', 'publish_at', 'status', 'text']);
    await fake.close();
  });
});

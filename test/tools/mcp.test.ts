/**
 * `postsched mcp`'s server with an in-process MCP client (the official SDK, linked transports), against the fake:
 * what the tools look like to every client (snapshot), every read tool called, and the safety rules end to end.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toolsHarness, type ToolsHarness } from './harness.js';

const NAME = /^[a-zA-Z0-9_.-]{1,64}$/;
const ALL = ['read', 'write', 'destructive'] as const;

/** Keywords some client rejects (Gemini: `$ref`, `anyOf` beside `type`, `format`, `additionalProperties`). */
function rejectedKeywords(schema: unknown, path = '#'): string[] {
  if (Array.isArray(schema)) return schema.flatMap((item, i) => rejectedKeywords(item, `${path}/${i}`));
  if (schema === null || typeof schema !== 'object') return [];
  const found: string[] = [];
  const record = schema as Record<string, unknown>;
  for (const keyword of ['$ref', '$defs', 'definitions', 'format', 'additionalProperties', '$schema', 'oneOf', 'allOf']) {
    if (keyword in record) found.push(`${path}/${keyword}`);
  }
  if ('anyOf' in record && 'type' in record) found.push(`${path}/anyOf+type`);
  for (const [key, value] of Object.entries(record)) found.push(...rejectedKeywords(value, `${path}/${key}`));
  return found;
}

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;
const data = (result: unknown) => (result as CallToolResult).structuredContent as Record<string, any>;

describe('postsched mcp, through an MCP client', () => {
  let h: ToolsHarness;
  afterEach(async () => {
    vi.useRealTimers();
    await h?.close();
  });

  it('lists at most 15 tools whose names, annotations and JSON Schemas every client accepts (snapshot)', async () => {
    h = await toolsHarness({ allow: [...ALL] });
    const { tools } = await h.mcp.listTools();
    expect(tools.length).toBeLessThanOrEqual(15);
    for (const tool of tools) {
      expect(tool.name).toMatch(NAME);
      expect(rejectedKeywords(tool.inputSchema), tool.name).toEqual([]);
      expect(tool.inputSchema.type).toBe('object');
      expect(Object.values(tool.inputSchema.properties ?? {}).every((p) => typeof (p as { description?: unknown }).description === 'string'), tool.name).toBe(true);
    }
    const byAccess = (read: boolean, destructive: boolean) => tools.filter((t) => t.annotations?.readOnlyHint === read && t.annotations?.destructiveHint === destructive).map((t) => t.name);
    expect(byAccess(true, false)).toEqual(['list_accounts', 'list_posts', 'get_post', 'get_post_analytics', 'next_slot', 'preview_post']);
    expect(byAccess(false, false)).toEqual(['schedule_post', 'upload_media_from_url']);
    expect(byAccess(false, true)).toEqual(['reschedule_post', 'cancel_post', 'delete_post']);
    await expect(JSON.stringify(tools, null, 2)).toMatchFileSnapshot('./__snapshots__/mcp-tools.json');
  });

  it('is read-only by default: only the read tools are listed, and a write tool is refused', async () => {
    h = await toolsHarness();
    const { tools } = await h.mcp.listTools();
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    const refused = await h.mcp.callTool({ name: 'schedule_post', arguments: { account_ids: ['acc_demo_x'], publish_at: '2031-01-01T09:00:00Z' } });
    expect(refused.isError).toBe(true);
    expect(h.fake.stats.postsCreated).toBe(0);
  });

  it('calls every read tool', async () => {
    h = await toolsHarness();
    const post = await h.client.posts.create({ account_ids: ['acc_demo_x'], publish_at: '2031-01-05T09:00:00Z', text: 'Hello' });
    await h.client.posts.create({ account_ids: ['acc_demo_linkedin'], publish_at: '2031-02-05T09:00:00Z', text: 'Later' });
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await h.mcp.callTool({ name, arguments: args });
      expect(result.isError, `${name}: ${text(result)}`).toBe(false);
      return data(result);
    };
    expect((await call('list_accounts', {})).untrusted_data.accounts.map((a: { id: string }) => a.id)).toEqual(['acc_demo_x', 'acc_demo_linkedin']);
    expect((await call('list_posts', { status: 'scheduled', limit: 10 })).untrusted_data.posts).toHaveLength(2);
    const filtered = await call('list_posts', { account_id: 'acc_demo_x', from: '2031-01-01T00:00:00Z', to: '2031-01-31T00:00:00+01:00' });
    expect(filtered.untrusted_data.posts.map((p: { id: string }) => p.id)).toEqual([post.id]);
    const first = await call('list_posts', { limit: 1 });
    const second = await call('list_posts', { limit: 1, cursor: first.next_cursor });
    expect([...first.untrusted_data.posts, ...second.untrusted_data.posts].map((p: { id: string }) => p.id).sort()).toHaveLength(2);
    expect(second.untrusted_data.posts[0].id).not.toBe(first.untrusted_data.posts[0].id);
    expect((await call('get_post', { post_id: post.id })).untrusted_data.post.text).toBe('Hello');
    expect(await call('get_post_analytics', { post_id: post.id })).toHaveProperty('untrusted_data.analytics');
    const slot = await call('next_slot', { time_zone: 'Europe/Berlin', days: ['mon'], times: ['09:00'], after: '2031-03-26T12:00:00Z' });
    expect(slot.publish_at).toBe('2031-03-31T07:00:00.000Z'); // Monday after the change to summer time: 09:00 CEST
    const preview = await call('preview_post', { account_ids: ['acc_demo_x'], publish_at: '2031-03-31T09:00', time_zone: 'Europe/Berlin', text: 'Hi' });
    expect(preview.would_send).toEqual({ account_ids: ['acc_demo_x'], publish_at: '2031-03-31T07:00:00.000Z', text: 'Hi' });
    expect(preview.resolved_local).toBe('2031-03-31T09:00:00 Europe/Berlin');
    expect(h.fake.stats.postsCreated).toBe(2); // the preview sent nothing
  });

  it('reads times only with an offset or an IANA zone, and echoes the instant', async () => {
    h = await toolsHarness({ allow: ['read', 'write'] });
    const bare = await h.mcp.callTool({ name: 'schedule_post', arguments: { account_ids: ['acc_demo_x'], publish_at: '2031-01-01T09:00' } });
    expect(bare.isError).toBe(true);
    expect(text(bare)).toContain('time_zone');
    const both = await h.mcp.callTool({ name: 'schedule_post', arguments: { account_ids: ['acc_demo_x'], publish_at: '2031-01-01T09:00Z', time_zone: 'Europe/Berlin' } });
    expect(both.isError).toBe(true);
    const zone = await h.mcp.callTool({ name: 'schedule_post', arguments: { account_ids: ['acc_demo_x'], publish_at: '2031-01-01T09:00', time_zone: 'Europe/Berlinn' } });
    expect(text(zone)).toMatch(/Europe\/Berlin/);
    expect(h.sent).toEqual([]);
    const offset = await h.mcp.callTool({ name: 'schedule_post', arguments: { account_ids: ['acc_demo_x'], publish_at: '2031-01-01T09:00+01:00' } });
    expect(data(offset).resolved_utc).toBe('2031-01-01T08:00:00.000Z');
    expect(h.fake.getPost(data(offset).post_id)?.publish_at).toBe('2031-01-01T08:00:00.000Z');
  });

  it('returns errors as results with the SDK\'s message, and refuses unknown fields', async () => {
    h = await toolsHarness();
    const missing = await h.mcp.callTool({ name: 'get_post', arguments: { post_id: 'post_nope' } });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/^NotFoundError: /);
    const typo = await h.mcp.callTool({ name: 'get_post', arguments: { postId: 'post_1' } });
    expect(typo.isError).toBe(true);
    expect(text(typo)).toContain('postId');
  });

  it('makes one post when the same schedule_post comes twice because the first answer was lost', async () => {
    h = await toolsHarness({ allow: ['read', 'write'] });
    const args = { account_ids: ['acc_demo_x'], publish_at: '2031-01-01T09:00:00Z', text: 'Once' };
    h.dropNextCreateAnswer();
    const lost = await h.mcp.callTool({ name: 'schedule_post', arguments: args });
    expect(lost.isError).toBe(true); // the model saw no answer…
    expect(h.fake.stats.postsCreated).toBe(1); // …though the service made the post
    const again = await h.mcp.callTool({ name: 'schedule_post', arguments: { ...args, publish_at: '2031-01-01T10:00:00+01:00' } });
    expect(again.isError, text(again)).toBe(false);
    expect(h.fake.stats.postsCreated).toBe(1);
    expect(h.sent.filter((r) => r === 'POST /posts')).toHaveLength(2);
    // Another request_id is another intended post.
    await h.mcp.callTool({ name: 'schedule_post', arguments: { ...args, request_id: 'second' } });
    expect(h.fake.stats.postsCreated).toBe(2);
  });

  it('asks the user through elicitation where the client supports it: approved, the action runs; declined, nothing is sent', async () => {
    for (const [answer, status, deletes] of [
      [{ action: 'accept', content: { approve: true } }, 'deleted', 1],
      [{ action: 'accept', content: { approve: false } }, 'scheduled', 0],
      [{ action: 'decline' }, 'scheduled', 0],
    ] as const) {
      h = await toolsHarness({ allow: ['read', 'destructive'] }, () => answer);
      const post = await h.client.posts.create({ account_ids: ['acc_demo_x'], publish_at: '2031-01-01T09:00:00Z' });
      const result = await h.mcp.callTool({ name: 'cancel_post', arguments: { post_id: post.id } });
      expect(result.isError, text(result)).toBe(deletes === 0);
      expect(h.sent.filter((r) => r.startsWith('DELETE'))).toHaveLength(deletes);
      expect(h.fake.getPost(post.id)?.status).toBe(status);
      await h.close();
    }
    h = undefined as unknown as ToolsHarness;
  });
});

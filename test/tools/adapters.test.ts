/**
 * The adapters of docs/agents.md take the definitions as they are: the AI SDK's `tool()` (with the zod schema or the
 * JSON Schema), plain JSON Schema for OpenAI and Anthropic function calling, and `registerTool` of an MCP server;
 * and the JSON Schemas round-trip through zod.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { asSchema, jsonSchema, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { CreatePostParamsSchema } from '@postsched/sdk';
import { postschedTools, type PostschedTool } from '@postsched/sdk/tools';
import { toolsHarness, type ToolsHarness } from './harness.js';

const INPUTS: Record<string, Record<string, unknown>> = {
  list_accounts: { limit: 5 },
  list_posts: { status: 'scheduled', limit: 5 },
  get_post: { post_id: 'post_1' },
  get_post_analytics: { post_id: 'post_1' },
  next_slot: { time_zone: 'Europe/Berlin', days: ['mon'], times: ['09:00'] },
  preview_post: { account_ids: ['acc_1'], publish_at: '2031-01-01T09:00:00Z', text: 'Hi' },
  schedule_post: { account_ids: ['acc_1'], publish_at: '2031-01-01T09:00', time_zone: 'Europe/Berlin' },
  upload_media_from_url: { url: 'https://cdn.example.com/a.png' },
  reschedule_post: { post_id: 'post_1', publish_at: '2031-01-01T09:00:00Z' },
  cancel_post: { post_id: 'post_1' },
  delete_post: { post_id: 'post_1', confirmation: 'x' },
};

describe('the adapters', () => {
  let h: ToolsHarness;
  let tools: PostschedTool[];
  afterEach(async () => h?.close());
  const setUp = async () => {
    h = await toolsHarness();
    tools = postschedTools(h.client, { allow: ['read', 'write', 'destructive'] });
  };

  it('z.toJSONSchema and z.fromJSONSchema round-trip every tool\'s JSON Schema; sample inputs pass both', async () => {
    await setUp();
    expect(Object.keys(INPUTS).sort()).toEqual(tools.map((t) => t.name).sort());
    for (const t of tools) {
      const back = z.fromJSONSchema(t.jsonSchema);
      const { $schema, ...again } = z.toJSONSchema(back, { io: 'input' });
      // `additionalProperties: {}` (any) is what an absent keyword means: fromJSONSchema makes a loose object of it.
      const same = JSON.parse(JSON.stringify(again, (key, value) => (key === 'additionalProperties' && JSON.stringify(value) === '{}' ? undefined : value)));
      expect(same, t.name).toEqual(t.jsonSchema);
      expect(back.safeParse(INPUTS[t.name]).success, t.name).toBe(true);
      expect(t.inputSchema.safeParse(INPUTS[t.name]).success, t.name).toBe(true);
      // The zod schema says what the JSON Schema says, field for field (the latter with descriptions, without the keywords clients reject).
      const fromZod = z.toJSONSchema(t.inputSchema, { io: 'input' }) as { properties: Record<string, unknown>; required?: string[] };
      expect(Object.keys(fromZod.properties), t.name).toEqual(Object.keys(t.jsonSchema.properties));
      expect(fromZod.required, t.name).toEqual(t.jsonSchema.required);
    }
  });

  it('the post fields of the input schemas are the SDK\'s own (CreatePostParamsSchema), not a second copy', async () => {
    await setUp();
    for (const name of ['preview_post', 'schedule_post']) {
      const { shape } = tools.find((t) => t.name === name)!.inputSchema;
      for (const field of ['account_ids', 'text', 'media_ids'] as const) expect(shape[field], `${name}.${field}`).toBe(CreatePostParamsSchema.shape[field]);
    }
  });

  it('the AI SDK\'s tool() takes each definition, with its zod schema or its JSON Schema, and runs it', async () => {
    await setUp();
    for (const t of tools) {
      const fromZod = tool({ description: t.description, inputSchema: t.inputSchema, execute: (input, { abortSignal }) => t.execute(input, { signal: abortSignal }) });
      const fromJson = tool({ description: t.description, inputSchema: jsonSchema(t.jsonSchema), execute: (input) => t.execute(input) });
      expect(Object.keys((await asSchema(fromZod.inputSchema).jsonSchema).properties ?? {}), t.name).toEqual(Object.keys(t.jsonSchema.properties));
      expect(await asSchema(fromJson.inputSchema).jsonSchema).toEqual(t.jsonSchema);
    }
    const list = tools.find((t) => t.name === 'list_accounts')!;
    const aiTool = tool({ description: list.description, inputSchema: list.inputSchema, execute: (input) => list.execute(input) });
    const result = await aiTool.execute!({}, { toolCallId: 'call_1', messages: [] });
    expect((result as { isError: boolean }).isError).toBe(false);
  });

  it('OpenAI and Anthropic tool lists are the JSON Schemas as they are', async () => {
    await setUp();
    const openai = tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.jsonSchema } }));
    const anthropic = tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.jsonSchema }));
    expect(JSON.parse(JSON.stringify(openai))).toEqual(openai); // plain JSON, nothing lost in transit
    expect(anthropic.every((a) => a.input_schema.type === 'object')).toBe(true);
  });

  it('an MCP server\'s registerTool takes each definition', async () => {
    await setUp();
    const server = new McpServer({ name: 'app', version: '1' });
    for (const t of tools) {
      server.registerTool(t.name, { title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations }, async (input, extra) => {
        const result = await t.execute(input, { signal: extra.signal });
        return { content: [{ type: 'text', text: result.text }], structuredContent: result.data, isError: result.isError };
      });
    }
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(a);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(tools.map((t) => t.name));
    const result = await client.callTool({ name: 'list_accounts', arguments: {} });
    expect(result.isError).toBe(false);
    await client.close();
    await server.close();
  });
});

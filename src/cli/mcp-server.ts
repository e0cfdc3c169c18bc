/**
 * The MCP server of `postsched mcp`: the tools of `@postsched/sdk/tools`, listed with their own JSON Schemas (the
 * subset every client accepts) and called through `execute`, so that the listing is exactly what the tests check.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PostschedTool } from '../tools/define.js';
import { CliError } from './command.js';

/** The MCP SDK, an optional peer: loaded when `postsched mcp` runs, so that the other commands work without it. */
export async function mcpSdk() {
  try {
    const [{ Server }, types] = await Promise.all([import('@modelcontextprotocol/sdk/server/index.js'), import('@modelcontextprotocol/sdk/types.js')]);
    return { Server, ...types };
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ERR_MODULE_NOT_FOUND') throw new CliError('needs the MCP SDK: npm install @modelcontextprotocol/sdk');
    throw error;
  }
}

/** An MCP server offering `tools` (connect it to a transport). */
export async function toolsServer(tools: readonly PostschedTool[], version: string): Promise<Server> {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema } = await mcpSdk();
  const server = new Server({ name: 'postsched', title: 'Post Scheduling Service', version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.jsonSchema,
      annotations: { title: tool.title, ...tool.annotations },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (tool === undefined) {
      const text = `Unknown tool ${JSON.stringify(request.params.name.slice(0, 64))}; this server offers ${tools.map((t) => t.name).join(', ')}.`;
      return { isError: true, content: [{ type: 'text', text }] };
    }
    const input = request.params.arguments ?? {};
    let result = await tool.execute(input, { signal: extra.signal });
    const confirmation = result.data.preview === true ? result.data.confirmation : undefined;
    if (typeof confirmation === 'string' && server.getClientCapabilities()?.elicitation !== undefined) {
      // The user approves the preview in the client's own prompt, where the client supports it. Never relied on:
      // elsewhere the model shows the preview and comes back with the confirmation.
      const answer = await server
        .elicitInput(
          {
            message: `Approve ${tool.name} ${JSON.stringify(result.data.action)}? The post now: ${JSON.stringify(result.data.untrusted_data)}`,
            requestedSchema: { type: 'object', properties: { approve: { type: 'boolean', title: `Run ${tool.name}` } }, required: ['approve'] },
          },
          { signal: extra.signal },
        )
        .catch(() => undefined); // no answer: the preview stands
      if (answer?.action === 'accept' && answer.content?.approve === true) result = await tool.execute({ ...input, confirmation }, { signal: extra.signal });
      else if (answer !== undefined) return { isError: true, content: [{ type: 'text', text: `The user did not approve ${tool.name} in the client's prompt: nothing was done. Do not retry unless they ask.` }] };
    }
    return { isError: result.isError, content: [{ type: 'text', text: result.text }], structuredContent: result.data };
  });
  return server;
}

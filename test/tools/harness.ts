/** A user's client against the fake, the tools over it, and an in-process MCP client talking to `postsched mcp`'s server. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { PostSched } from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { postschedTools, type PostschedToolsOptions } from '@postsched/sdk/tools';
import { toolsServer } from '../../src/cli/mcp-server.js';

export interface ToolsHarness {
  fake: FakeService;
  client: PostSched;
  /** The client's access token. */
  token: string;
  /** Requests that reached the fake, `"METHOD /path"`. */
  sent: string[];
  /** The next POST /posts is handled by the fake, then its answer is lost (the connection drops). */
  dropNextCreateAnswer(): void;
  mcp: Client;
  close(): Promise<void>;
}

/** How the in-process MCP client answers an elicitation (the client then declares the capability). */
export type Elicit = () => { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, boolean> };

export async function toolsHarness(options: PostschedToolsOptions = {}, elicit?: Elicit): Promise<ToolsHarness> {
  const fake = createFakeService();
  const { access_token } = fake.issueTokens();
  const sent: string[] = [];
  let drop = false;
  const client = new PostSched({
    baseUrl: fake.baseUrl,
    auth: access_token,
    maxRetries: 0,
    fetch: async (input, init) => {
      const request = new Request(input, init);
      sent.push(`${request.method} ${new URL(request.url).pathname.slice(new URL(fake.baseUrl).pathname.replace(/\/$/, '').length)}`);
      const response = await fake.handler(request);
      if (drop && request.method === 'POST' && request.url.endsWith('/posts')) {
        drop = false;
        throw new TypeError('fetch failed: the answer was lost');
      }
      return response;
    },
  });
  const server = await toolsServer(postschedTools(client, options), 'test');
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const mcp = new Client({ name: 'test', version: '1' }, elicit === undefined ? {} : { capabilities: { elicitation: {} } });
  if (elicit !== undefined) mcp.setRequestHandler(ElicitRequestSchema, elicit);
  await mcp.connect(clientSide);
  return {
    fake,
    client,
    token: access_token,
    sent,
    dropNextCreateAnswer: () => (drop = true),
    mcp,
    close: async () => {
      await mcp.close();
      await server.close();
      await fake.close();
    },
  };
}

/**
 * `@postsched/sdk/tools`: tool definitions for AI agents (function calling and MCP), read-only unless told
 * otherwise, with a confirmation before anything destructive and one post per intended post. docs/agents.md shows
 * the adapters (Vercel AI SDK, OpenAI, Anthropic, MCP) and the safety rules.
 */
import type { PostSched } from '../client.js';
import { checkOptions, invalidOption, optionNames } from '../core/invalid-option.js';
import { changeTools } from './change-tools.js';
import type { PostschedTool, ToolAccess } from './define.js';
import type { MediaDownloadOptions } from './fetch-media.js';
import { readTools } from './read-tools.js';
import { Seal } from './seal.js';

export type { PostschedTool, ToolAccess, ToolAnnotations, ToolCallOptions, ToolJsonSchema, ToolResult } from './define.js';
export type { MediaDownloadOptions } from './fetch-media.js';

/** Options of {@link postschedTools}. */
export interface PostschedToolsOptions {
  /**
   * Which tools to give: `'read'` (lists, gets, previews; the default alone), `'write'` (`schedule_post`,
   * `upload_media_from_url`), `'destructive'` (`reschedule_post`, `cancel_post`, `delete_post`).
   */
  allow?: readonly ToolAccess[] | undefined;
  /**
   * The HMAC key of confirmations and of `schedule_post`'s idempotency keys. Default: random per toolset, so a
   * confirmation works only within the toolset that made it. Give one (32+ random bytes, kept secret) when several
   * processes serve one agent, or to keep `schedule_post` from posting twice across a restart.
   */
  secret?: string | undefined;
  /** How long a destructive action's confirmation stays valid, in seconds (default 300). */
  confirmationTtlSeconds?: number | undefined;
  /** The bounds of `upload_media_from_url`'s download. */
  media?: MediaDownloadOptions | undefined;
}

const ACCESS: readonly ToolAccess[] = ['read', 'write', 'destructive'];
const OPTIONS = /* @__PURE__ */ optionNames<PostschedToolsOptions>({ allow: 0, secret: 0, confirmationTtlSeconds: 0, media: 0 });

/**
 * The tools acting through `client` (one user's `PostSched`), those `allow` permits. Each tool checks its input,
 * returns errors as results (`isError`), fences what the service returned as untrusted data, and enforces its rules
 * itself, whatever a client makes of the annotations.
 *
 * @example
 * import { postschedTools } from '@postsched/sdk/tools'
 * const tools = postschedTools(client, { allow: ['read', 'write'] })
 * const result = await tools.find((t) => t.name === 'list_posts')!.execute({ status: 'scheduled' })
 */
export function postschedTools(client: PostSched, options: PostschedToolsOptions = {}): PostschedTool[] {
  const { allow = ['read'], secret, confirmationTtlSeconds = 300, media = {} } = checkOptions(options, OPTIONS, 'postschedTools()');
  if (!Array.isArray(allow)) invalidOption('allow', `must be an array of ${ACCESS.map((a) => `'${a}'`).join(', ')}, such as ['read', 'write'].`);
  allow.forEach((access, index) => ACCESS.includes(access) || invalidOption(`allow[${index}]`, `must be 'read', 'write' or 'destructive'; got ${JSON.stringify(String(access).slice(0, 40))}.`, ['allow', index]));
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < 16)) invalidOption('secret', 'must be a string of at least 16 characters (32 random bytes, hex or base64, is best).');
  if (!(Number.isFinite(confirmationTtlSeconds) && confirmationTtlSeconds > 0 && confirmationTtlSeconds <= 3600)) {
    invalidOption('confirmationTtlSeconds', 'must be a number of seconds from 1 to 3600 (default 300).');
  }
  const seal = new Seal(secret, confirmationTtlSeconds);
  return [...readTools(client), ...changeTools(client, seal, media)].filter((tool) => allow.includes(tool.access));
}

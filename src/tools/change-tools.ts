/**
 * The tools that act: `preview_post` (read: renders what `schedule_post` would send), the write tools
 * (`schedule_post`, `upload_media_from_url`) and the destructive ones (`reschedule_post`, `cancel_post`,
 * `delete_post`), which act only with a confirmation made by a preview of that exact action.
 * No `create_draft`: the service's spec shows no drafts.
 */
import * as z from 'zod/mini';
import type { PostSched } from '../client.js';
import type { Post } from '../resources/posts.js';
import { CreatePostParamsSchema } from '../resources/posts.js';
import { defineTool, ToolRefusal, type CallOptions, type PostschedTool, type ToolOutput } from './define.js';
import { downloadMedia, type MediaDownloadOptions } from './fetch-media.js';
import { compactPost, POST_ID_HELP, postIdField } from './read-tools.js';
import type { Seal } from './seal.js';
import { echoTime, resolveTime, TIME_HELP, ZONE_HELP } from './times.js';

/** The post's fields as `posts.create` takes them (its schema), `publish_at` as the tools read times. */
const postInput = z.extend(z.pick(CreatePostParamsSchema, { account_ids: true, text: true, media_ids: true }), {
  publish_at: z.string(),
  time_zone: z.optional(z.string()),
});
const postFields = {
  account_ids: 'Ids of the accounts to publish to (from list_accounts).',
  text: 'The post\'s text.',
  media_ids: 'Ids of uploaded media to attach (from upload_media_from_url).',
  publish_at: `When to publish: ${TIME_HELP}`,
  time_zone: ZONE_HELP,
};
const confirmation = z.optional(z.string());
const CONFIRMATION_HELP =
  'Leave out to preview the action: the answer holds the confirmation. Pass it only after the user approved that preview.';

type PostInput = z.output<typeof postInput>;

/** How many of its intended posts a toolset remembers (oldest forgotten first). */
const REMEMBERED_POSTS = 1000;

/** The body `posts.create` gets, its instant resolved. */
function postBody(input: PostInput): { body: { account_ids: string[]; publish_at: string; text?: string; media_ids?: string[] }; echo: Record<string, string> } {
  const instant = resolveTime('publish_at', input.publish_at, input.time_zone);
  const { account_ids, text, media_ids } = input;
  return { body: { account_ids, publish_at: instant.toISOString(), ...(text === undefined ? {} : { text }), ...(media_ids === undefined ? {} : { media_ids }) }, echo: echoTime(instant, input.time_zone) };
}

export function changeTools(client: PostSched, seal: Seal, media: MediaDownloadOptions): PostschedTool[] {
  /**
   * schedule_post's posts by idempotency key, in flight or made: a repeat whose first answer reached the tool (then
   * was lost on its way to the model) gets that post without a second request, whether or not the service honours
   * `Idempotency-Key` (not shown). A failed create is forgotten: its repeat sends again, with the same key.
   */
  const scheduled = new Map<string, Promise<Post>>();
  /** Without a confirmation: the preview (and a confirmation for it); with one: checked, then `act`. */
  const guarded = async (tool: string, action: Record<string, unknown>, given: string | undefined, opts: CallOptions, act: () => Promise<ToolOutput>): Promise<ToolOutput> => {
    if (given !== undefined) {
      await seal.check(tool, action, given);
      return act();
    }
    const post = await client.posts.get(action.post_id as string, opts);
    const minted = await seal.confirmation(tool, action);
    return {
      summary:
        `PREVIEW ONLY, nothing was changed. ${tool} would act on post ${post.id}, shown below. Show this to the user; if and only ` +
        `if they approve, call ${tool} again with the same input and confirmation "${minted.confirmation}" (valid until ${minted.expires_at}).`,
      fields: { preview: true, action, ...minted },
      untrusted: { post: compactPost(post) },
    };
  };

  return [
    defineTool({
      name: 'preview_post',
      title: 'Preview a post',
      description: 'Checks a post as schedule_post takes it and shows what would be sent, with the publication time resolved. Sends nothing.',
      access: 'read',
      idempotent: true,
      input: postInput,
      fields: postFields,
      async run(input) {
        const { body, echo } = postBody(input);
        return { summary: `Nothing was sent. schedule_post would send this post for ${body.publish_at}.`, fields: { would_send: body, ...echo } };
      },
    }),
    defineTool({
      name: 'schedule_post',
      title: 'Schedule a post',
      description:
        'Schedules a post for publication to the given accounts (it will be published to a real audience). Safe to repeat: the same ' +
        'input makes one post, so if an answer was lost, call again with the same input. To schedule a second, identical post on ' +
        'purpose, give another request_id.',
      access: 'write',
      idempotent: true,
      // What it sends reaches people outside the service (the accounts' audience): an open world, as MCP defines it.
      openWorld: true,
      input: z.extend(postInput, { request_id: z.optional(z.string().check(z.maxLength(100))) }),
      fields: { ...postFields, request_id: 'Optional: any id of yours telling apart two intended posts with the same input.' },
      async run(input, opts) {
        const { body, echo } = postBody(input);
        // One key per intended post, made before the SDK's retries: a repeat (by the SDK or by the model) is the same request.
        const idempotencyKey = await seal.idempotencyKey('schedule_post', { ...body, request_id: input.request_id });
        let made = scheduled.get(idempotencyKey);
        const repeat = made !== undefined;
        if (made === undefined) {
          const creating = client.posts.create(body, { ...opts, idempotencyKey });
          made = creating;
          scheduled.set(idempotencyKey, creating);
          creating.catch(() => scheduled.get(idempotencyKey) === creating && scheduled.delete(idempotencyKey));
          if (scheduled.size > REMEMBERED_POSTS) scheduled.delete(scheduled.keys().next().value!);
        }
        const post = await made;
        const summary = repeat
          ? `Already scheduled by an earlier call with this input: post ${post.id} for ${body.publish_at}. Nothing was sent again (for a second, identical post, give another request_id).`
          : `Scheduled post ${post.id} for ${body.publish_at}.`;
        return { summary, fields: { post_id: post.id, ...echo }, untrusted: { post } };
      },
    }),
    defineTool({
      name: 'upload_media_from_url',
      title: 'Upload media from a URL',
      description: 'Downloads a file from a public http(s) URL (size and time bounded) and uploads it to the media library; attach the returned media id to a post.',
      access: 'write',
      idempotent: false,
      openWorld: true,
      input: z.strictObject({ url: z.string(), filename: z.optional(z.string().check(z.minLength(1), z.maxLength(200))) }),
      fields: { url: 'A public http or https URL of the file.', filename: 'The file name to give it (default: the URL\'s last segment).' },
      async run({ url, filename }, opts) {
        const file = await downloadMedia(url, media, opts.signal);
        const item = await client.media.upload({ file: file.bytes, filename: filename ?? file.filename, contentType: file.contentType }, opts);
        return { summary: `Uploaded ${file.bytes.byteLength} bytes as media ${String(item.id)}.`, fields: { media_id: item.id }, untrusted: { media: item } };
      },
    }),
    defineTool({
      name: 'reschedule_post',
      title: 'Reschedule a post',
      description: `Moves a scheduled post to another publication time. Two steps: without confirmation it previews; ${CONFIRMATION_HELP}`,
      access: 'destructive',
      idempotent: true,
      input: z.strictObject({ post_id: postIdField(), publish_at: z.string(), time_zone: z.optional(z.string()), confirmation }),
      fields: { post_id: POST_ID_HELP, publish_at: `The new time: ${TIME_HELP}`, time_zone: ZONE_HELP, confirmation: CONFIRMATION_HELP },
      async run({ post_id, publish_at, time_zone, confirmation: given }, opts) {
        const instant = resolveTime('publish_at', publish_at, time_zone);
        const action = { post_id, publish_at: instant.toISOString() };
        return guarded('reschedule_post', action, given, opts, async () => {
          const post = await client.posts.update(post_id, { publish_at: instant }, opts);
          return { summary: `Post ${post.id} now publishes at ${instant.toISOString()}.`, fields: echoTime(instant, time_zone), untrusted: { post: compactPost(post) } };
        });
      },
    }),
    defineTool({
      name: 'cancel_post',
      title: 'Cancel a scheduled post',
      description: `Stops a scheduled post from being published (its status becomes deleted). Two steps: without confirmation it previews; ${CONFIRMATION_HELP}`,
      access: 'destructive',
      idempotent: true,
      input: z.strictObject({ post_id: postIdField(), confirmation }),
      fields: { post_id: POST_ID_HELP, confirmation: CONFIRMATION_HELP },
      async run({ post_id, confirmation: given }, opts) {
        return guarded('cancel_post', { post_id }, given, opts, async () => {
          const post = await client.posts.get(post_id, opts);
          if (post.status !== undefined && post.status !== 'scheduled') throw new ToolRefusal(`Post ${post_id} is ${String(post.status)}, not scheduled: there is nothing to cancel.`);
          await client.posts.delete(post_id, opts);
          return { summary: `Cancelled post ${post_id}: it will not be published.` };
        });
      },
    }),
    defineTool({
      name: 'delete_post',
      title: 'Delete a post',
      description: `Deletes a post (DELETE /posts/{id}; the service refuses one already published). Two steps: without confirmation it previews; ${CONFIRMATION_HELP}`,
      access: 'destructive',
      idempotent: true,
      input: z.strictObject({ post_id: postIdField(), confirmation }),
      fields: { post_id: POST_ID_HELP, confirmation: CONFIRMATION_HELP },
      async run({ post_id, confirmation: given }, opts) {
        return guarded('delete_post', { post_id }, given, opts, async () => {
          await client.posts.delete(post_id, opts);
          return { summary: `Deleted post ${post_id}.` };
        });
      },
    }),
  ];
}

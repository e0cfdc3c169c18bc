/** The read tools: they change nothing at the service (`allow: ['read']`, the default). */
import * as z from 'zod/mini';
import type { PostSched } from '../client.js';
import type { Post } from '../resources/posts.js';
import { STATUS_FILTERS } from '../resources/posts.js';
import { weeklySlots, type Weekday } from '../schedule/weekly-slots.js';
import { defineTool, ToolRefusal, type PostschedTool } from './define.js';
import { echoTime, resolveTime } from './times.js';

const id = (what: string) => z.string().check(z.minLength(1, `must be a non-empty ${what}.`));
const pageLimit = () => z.optional(z.int().check(z.minimum(1), z.maximum(50)));
const PREVIEW_CHARS = 280;

/** The `post_id` field of every tool that takes one. */
export const postIdField = () => id('post id');
export const POST_ID_HELP = 'The post\'s id (post_…).';

/** A post in few tokens: what a list needs, the text cut. */
export function compactPost(post: Post): Record<string, unknown> {
  const text = typeof post.text === 'string' && post.text.length > PREVIEW_CHARS ? `${post.text.slice(0, PREVIEW_CHARS)}…` : post.text;
  return { id: post.id, status: post.status, publish_at: post.publish_at, account_ids: post.account_ids, text, media_ids: post.media_ids };
}

export function readTools(client: PostSched): PostschedTool[] {
  return [
    defineTool({
      name: 'list_accounts',
      title: 'List connected accounts',
      description: 'Lists the social accounts the user connected: their ids are what schedule_post takes as account_ids.',
      access: 'read',
      idempotent: true,
      input: z.strictObject({ cursor: z.optional(z.string()), limit: pageLimit() }),
      fields: { cursor: 'next_cursor of an earlier page, for the next one.', limit: 'At most this many accounts (1–50, default 20).' },
      async run({ cursor, limit }, opts) {
        const page = await firstPage(client.accounts.list({ pageSize: limit ?? 20 }, { ...opts, ...(cursor === undefined ? {} : { extraQuery: { cursor } }) }));
        return { summary: `${page.data.length} account(s).`, fields: { next_cursor: page.next_cursor }, untrusted: { accounts: page.data } };
      },
    }),
    defineTool({
      name: 'list_posts',
      title: 'List posts',
      description:
        'Lists the user\'s posts, newest pages first, in compact form (text cut at 280 characters; get_post has the whole post). ' +
        'Filter by status, publication time range and account. The time and account filters apply to the page read: ' +
        'a page may hold fewer posts than `limit`; pass next_cursor for the next page.',
      access: 'read',
      idempotent: true,
      input: z.strictObject({
        status: z.optional(z.enum(STATUS_FILTERS)),
        from: z.optional(z.string()),
        to: z.optional(z.string()),
        account_id: z.optional(id('account id')),
        cursor: z.optional(z.string()),
        limit: pageLimit(),
      }),
      fields: {
        status: 'Only posts in this status.',
        from: 'Only posts publishing at or after this instant (ISO 8601 with an offset).',
        to: 'Only posts publishing at or before this instant (ISO 8601 with an offset).',
        account_id: 'Only posts to this account.',
        cursor: 'next_cursor of an earlier page, for the next one.',
        limit: 'Posts per page read (1–50, default 20).',
      },
      async run({ status, from, to, account_id, cursor, limit }, opts) {
        const after = from === undefined ? undefined : resolveTime('from', from, undefined).getTime();
        const before = to === undefined ? undefined : resolveTime('to', to, undefined).getTime();
        const page = await firstPage(
          client.posts.list({ ...(status === undefined ? {} : { status }), pageSize: limit ?? 20 }, { ...opts, ...(cursor === undefined ? {} : { extraQuery: { cursor } }) }),
        );
        const posts = page.data.filter((post) => {
          const at = typeof post.publish_at === 'string' ? Date.parse(post.publish_at) : Number.NaN;
          if ((after !== undefined && !(at >= after)) || (before !== undefined && !(at <= before))) return false;
          return account_id === undefined || post.account_ids.includes(account_id);
        });
        return {
          summary: `${posts.length} post(s) of the ${page.data.length} on this page.${page.next_cursor === null ? ' No more pages.' : ''}`,
          fields: { next_cursor: page.next_cursor },
          untrusted: { posts: posts.map(compactPost) },
        };
      },
    }),
    defineTool({
      name: 'get_post',
      title: 'Get a post',
      description: 'One post, whole: its status, publication time, target accounts, text and media.',
      access: 'read',
      idempotent: true,
      input: z.strictObject({ post_id: postIdField() }),
      fields: { post_id: POST_ID_HELP },
      async run({ post_id }, opts) {
        return { summary: `Post ${post_id}.`, untrusted: { post: await client.posts.get(post_id, opts) } };
      },
    }),
    defineTool({
      name: 'get_post_analytics',
      title: 'Get a post\'s analytics',
      description: 'The counters of one published post (impressions, likes, shares, comments, clicks, as the service gives them).',
      access: 'read',
      idempotent: true,
      input: z.strictObject({ post_id: postIdField() }),
      fields: { post_id: POST_ID_HELP },
      async run({ post_id }, opts) {
        return { summary: `Analytics of post ${post_id}.`, untrusted: { analytics: await client.analytics.getPost(post_id, opts) } };
      },
    }),
    defineTool({
      name: 'next_slot',
      title: 'Next weekly slot',
      description:
        'The next instant of a weekly schedule at local wall times ("Mon and Thu at 09:00 in Europe/Berlin"), right across ' +
        'daylight-saving changes. Computed here: nothing is sent to the service. Pass the result to schedule_post as publish_at.',
      access: 'read',
      idempotent: true,
      input: z.strictObject({
        time_zone: z.string(),
        days: z.array(z.string()).check(z.minLength(1)),
        times: z.array(z.string()).check(z.minLength(1)),
        after: z.optional(z.string()),
      }),
      fields: {
        time_zone: 'IANA time zone of the wall times (such as "Europe/Berlin").',
        days: 'Days of the week: "mon", "tue", "wed", "thu", "fri", "sat", "sun".',
        times: 'Wall times "HH:mm" of each of those days.',
        after: 'The slot comes strictly after this instant (ISO 8601 with an offset); default: now.',
      },
      async run({ time_zone, days, times, after }) {
        const from = after === undefined ? new Date() : resolveTime('after', after, undefined);
        const [slot] = weeklySlots({ timeZone: time_zone, days: days as Weekday[], times, from, count: 1 });
        if (slot === undefined) throw new ToolRefusal('No slot matches that schedule.');
        return { summary: `Next slot: ${slot.toISOString()}.`, fields: { publish_at: slot.toISOString(), ...echoTime(slot, time_zone) } };
      },
    }),
  ];
}

/** The first page of a list: one request per tool call, with the cursor of the next. */
async function firstPage<T>(list: { pages(): AsyncGenerator<{ data: T[]; next_cursor: string | null }> }): Promise<{ data: T[]; next_cursor: string | null }> {
  for await (const page of list.pages()) return page;
  return { data: [], next_cursor: null };
}
